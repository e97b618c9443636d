/// <reference lib="webworker" />
// corral's service worker: Web Push notifications and their clicks. It caches
// nothing (the server sets cache headers; the UI needs the live server anyway).

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
