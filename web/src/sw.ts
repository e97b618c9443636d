/// <reference lib="webworker" />
// corral's service worker: Web Push notifications and their clicks, and a page that says
// corral is not reachable when a navigation fails on the network. It caches nothing (the
// server sets cache headers; the UI needs the live server anyway).

const sw = self as unknown as ServiceWorkerGlobalScope;

interface PushPayload {
  title?: string;
  body?: string;
  session_id?: string;
  url?: string;
  tag?: string;
}

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
  const url = p.url || (p.session_id ? `/#/s/${encodeURIComponent(p.session_id)}` : '/');
  e.waitUntil(
    (async () => {
      // A page that is visible shows its own notification for the same event.
      const wins = await sw.clients.matchAll({ type: 'window', includeUncontrolled: true });
      if (wins.some((c) => c.visibilityState === 'visible' && c.focused)) return;
      await sw.registration.showNotification(p.title || 'corral', {
        body: p.body || '',
        tag: p.tag || (p.session_id ? `corral-${p.session_id}` : undefined),
        icon: '/icon-192.png',
        badge: '/icon-192.png',
        data: { url, session_id: p.session_id || '' },
      });
    })(),
  );
});

sw.addEventListener('notificationclick', (e) => {
  e.notification.close();
  const data = (e.notification.data || {}) as { url?: string; session_id?: string };
  const url = new URL(data.url || '/', sw.location.origin).href;
  e.waitUntil(
    (async () => {
      const wins = await sw.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const same = wins.find((c) => new URL(c.url).origin === sw.location.origin);
      if (same) {
        await same.focus();
        if (data.session_id) same.postMessage({ type: 'open', session_id: data.session_id });
        else if ('navigate' in same) await same.navigate(url);
        return;
      }
      await sw.clients.openWindow(url);
    })(),
  );
});

export {};
