/// <reference lib="webworker" />
// corral's service worker: Web Push notifications, their buttons and their
// clicks, and a page that says corral is not reachable when a navigation
// fails on the network. It caches nothing (the server sets cache headers;
// the UI needs the live server anyway).

import { ops } from './api.gen';

const sw = self as unknown as ServiceWorkerGlobalScope;

/** A notification's button, as internal/notify's Message.Actions says. */
interface PushAction {
  action: string;
  title: string;
}

interface PushPayload {
  title?: string;
  body?: string;
  session_id?: string;
  url?: string;
  tag?: string;
  dialog_id?: string;
  kind?: string;
  actions?: PushAction[];
}

/** What a notification keeps for its click. */
interface NoteData {
  url: string;
  session_id: string;
  dialog_id: string;
  title: string;
}

/** Where the page leaves the CSRF value for a browser without cookieStore (notify.ts). */
const CSRF_CACHE = 'corral-sw';
const CSRF_KEY = '/__corral/csrf';

// What an action may be: yes, no, or option:N (a dialog's option number).
const ACTION = /^(yes|no|option:([1-9][0-9]?))$/;

sw.addEventListener('install', () => {
  void sw.skipWaiting();
});

sw.addEventListener('activate', (e) => {
  e.waitUntil(sw.clients.claim());
});

// Shown when loading the page fails on the network: corral is down (or the machine is).
const offlinePage = (host: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>corral is not reachable</title>
<style>body{font:15px/1.6 system-ui,sans-serif;background:#0f1115;color:#dde1e8;margin:0;display:grid;place-items:center;min-height:100vh}
main{max-width:520px;padding:24px}code{background:#20242d;padding:1px 6px;border-radius:4px}
a{display:inline-block;padding:6px 14px;border-radius:6px;background:#6ea8ff;color:#0b1220;text-decoration:none;font-weight:600}
@media (prefers-color-scheme: light){body{background:#fff;color:#1d2127}code{background:#eceef2}a{background:#0550ae;color:#fff}}</style></head>
<body><main data-testid="offline-page"><h1>corral is not reachable</h1>
<p>This browser could not reach corral at ${host}. On that machine, start it with <code>corral serve</code>
(installed as a service, <code>corral service status</code> says how it runs), then try again.</p>
<p><a href="">Try again</a></p></main></body></html>`;

sw.addEventListener('fetch', (e) => {
  if (e.request.mode !== 'navigate') return;
  e.respondWith(
    fetch(e.request).catch(
      () =>
        new Response(offlinePage(sw.location.host.replace(/[^A-Za-z0-9.:[\]-]/g, '')), {
          status: 503,
          headers: {
            'Content-Type': 'text/html; charset=utf-8',
            'Cache-Control': 'no-store',
            'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
          },
        }),
    ),
  );
});

sw.addEventListener('push', (e) => {
  let p: PushPayload = {};
  if (e.data) {
    try {
      p = e.data.json() as PushPayload;
    } catch {
      p = { body: e.data.text() };
    }
  }
  e.waitUntil(
    (async () => {
      // A page that is visible shows its own notification for the same event.
      const wins = await sw.clients.matchAll({ type: 'window', includeUncontrolled: true });
      if (wins.some((c) => c.visibilityState === 'visible' && c.focused)) return;
      await show(p);
    })(),
  );
});

function str(v: unknown, max: number): string {
  return typeof v === 'string' ? v.slice(0, max) : '';
}

/** Show a push: its text, and its answers as buttons when it names its dialog. */
function show(p: PushPayload): Promise<void> {
  const sid = str(p.session_id, 200);
  const url = str(p.url, 2000) || (sid ? `/#/s/${encodeURIComponent(sid)}` : '/');
  const dialog = str(p.dialog_id, 200);
  const max = (Notification as unknown as { maxActions?: number }).maxActions ?? 2;
  const actions =
    dialog && Array.isArray(p.actions)
      ? p.actions
          .filter((a) => a && ACTION.test(str(a.action, 20)) && str(a.title, 60))
          .slice(0, max)
          .map((a) => ({ action: a.action, title: str(a.title, 60) }))
      : [];
  const title = str(p.title, 200) || 'corral';
  const data: NoteData = { url, session_id: sid, dialog_id: dialog, title };
  // `actions` is in the Notifications spec but not in TypeScript's lib.
  const opts: NotificationOptions & { actions?: { action: string; title: string }[] } = {
    body: str(p.body, 1000),
    tag: str(p.tag, 200) || (sid ? `corral-${sid}` : undefined),
    icon: '/icon-192.png',
    badge: '/icon-192.png',
    data,
    requireInteraction: actions.length > 0,
  };
  if (actions.length) opts.actions = actions;
  return sw.registration.showNotification(title, opts);
}

/** The CSRF value the API wants with a POST: the cookie, else what the page left. */
async function csrf(): Promise<string> {
  const store = (sw as unknown as { cookieStore?: { get(name: string): Promise<{ value?: string } | null> } }).cookieStore;
  if (store) {
    try {
      const c = await store.get('corral_csrf');
      if (c?.value) return c.value;
    } catch {
      /* fall back */
    }
  }
  try {
    const r = await (await caches.open(CSRF_CACHE)).match(CSRF_KEY);
    if (r) return (await r.text()).slice(0, 200);
  } catch {
    /* none */
  }
  return '';
}

/**
 * Answer the notification's dialog as the dashboard does (the answer op, with
 * the dialog's id: a newer dialog refuses it), then say what happened in
 * the same notification's place.
 */
async function answer(d: NoteData, action: string): Promise<void> {
  const m = ACTION.exec(action);
  if (!m || !d.session_id || !d.dialog_id) return;
  const body: { dialog: string; choice?: string; option?: number } = { dialog: d.dialog_id };
  if (m[2]) body.option = Number(m[2]);
  else body.choice = action;
  let said: string;
  try {
    const res = await fetch(ops.answer.path.replace('{id}', encodeURIComponent(d.session_id)), {
      method: ops.answer.method,
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-Corral-CSRF': await csrf() },
      body: JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
    const r = (await res.json().catch(() => ({}))) as { answered?: unknown; code?: unknown; error?: unknown };
    if (res.ok) said = `Answered: ${str(r.answered, 200) || action}`;
    else if (r.code === 'stale_dialog') said = 'Not answered: that dialog is no longer open';
    else if (res.status === 401 || res.status === 403) said = 'Not answered: open corral and log in';
    else said = `Not answered: ${str(r.error, 200) || str(r.code, 50) || res.status}`;
  } catch {
    said = 'Not answered: corral is not reachable';
  }
  const clients = await sw.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const c of clients) c.postMessage({ type: 'answered', session_id: d.session_id, text: said });
  await sw.registration.showNotification(d.title, {
    body: said,
    tag: `corral-${d.session_id}`,
    icon: '/icon-192.png',
    badge: '/icon-192.png',
    data: { ...d, dialog_id: '' } satisfies NoteData,
  });
}

/** Focus a corral window on the session, or open one. */
async function open(d: Partial<NoteData>): Promise<void> {
  const url = new URL(d.url || '/', sw.location.origin).href;
  const wins = await sw.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const same = wins.find((c) => new URL(c.url).origin === sw.location.origin);
  if (same) {
    await same.focus();
    if (d.session_id) same.postMessage({ type: 'open', session_id: d.session_id });
    else if ('navigate' in same) await same.navigate(url);
    return;
  }
  await sw.clients.openWindow(url);
}

sw.addEventListener('notificationclick', (e) => {
  e.notification.close();
  const d = (e.notification.data || {}) as Partial<NoteData>;
  const work = e.action && e.action !== 'open' ? answer(d as NoteData, e.action) : open(d);
  try {
    e.waitUntil(work);
  } catch {
    // An event a test dispatched (not the browser) cannot be extended; the work runs anyway.
  }
});
