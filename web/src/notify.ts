// Desktop notifications (while the page is open), the service worker and Web Push.

import { signal } from '@preact/signals';
import { api, ApiError, cookie } from './api';
import { config, openSession, selectedId, toast } from './store';
import type { Notification as Notice } from './types';

export type PermissionState = NotificationPermission | 'unsupported';

export const notifPermission = signal<PermissionState>(typeof Notification === 'undefined' ? 'unsupported' : Notification.permission);

export const pushSupported =
  typeof navigator !== 'undefined' &&
  'serviceWorker' in navigator &&
  typeof window !== 'undefined' &&
  'PushManager' in window &&
  typeof Notification !== 'undefined';

/** Whether this browser holds a push subscription (null: not known yet). */
export const pushEnabled = signal<boolean | null>(null);

let registration: Promise<ServiceWorkerRegistration | null> | null = null;

/** Register /sw.js at the root scope (once). Registration alone asks for nothing. */
export function registerSW(): Promise<ServiceWorkerRegistration | null> {
  if (!('serviceWorker' in navigator)) return Promise.resolve(null);
  if (!registration) {
    registration = navigator.serviceWorker
      .register('/sw.js', { scope: '/' })
      .then(async (r) => {
        navigator.serviceWorker.addEventListener('message', onSWMessage);
        try {
          const sub = await r.pushManager?.getSubscription();
          pushEnabled.value = !!sub;
        } catch {
          pushEnabled.value = false;
        }
        return r;
      })
      .catch(() => {
        registration = null;
        pushEnabled.value = false;
        return null;
      });
  }
  return registration;
}

function onSWMessage(e: MessageEvent): void {
  const d = e.data as { type?: string; session_id?: string; text?: string } | null;
  if (d && d.type === 'open' && d.session_id) openSession(d.session_id);
  // A notification's button answered (sw.ts): say so here too.
  if (d && d.type === 'answered' && typeof d.text === 'string') toast(d.text.slice(0, 300), 'info', 4000);
}

// Where the service worker finds the CSRF value when it has no cookieStore
// (sw.ts): the cookie is readable by this origin's pages anyway.
const CSRF_CACHE = 'corral-sw';
const CSRF_KEY = '/__corral/csrf';

/** Leave the CSRF value for the service worker's answers (after each login). */
export async function shareCSRF(): Promise<void> {
  const v = cookie('corral_csrf');
  if (!v || typeof caches === 'undefined') return;
  try {
    await (await caches.open(CSRF_CACHE)).put(CSRF_KEY, new Response(v));
  } catch {
    /* no Cache API here: cookieStore may do */
  }
}

/** Logged out: the service worker's answers stop. */
export async function forgetCSRF(): Promise<void> {
  if (typeof caches === 'undefined') return;
  try {
    await caches.delete(CSRF_CACHE);
  } catch {
    /* nothing kept */
  }
}

export async function requestNotificationPermission(): Promise<PermissionState> {
  if (typeof Notification === 'undefined') return 'unsupported';
  const p = await Notification.requestPermission();
  notifPermission.value = p;
  return p;
}

/** Show a desktop notification for a notification event, in the server's words. */
export function notifyEvent(n: Notice): void {
  const id = n.session_id;
  const body = n.message ?? '';
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  const looking = document.visibilityState === 'visible' && document.hasFocus();
  // The person is looking at this very session: no need to interrupt.
  if (looking && selectedId.value === id) return;
  // With push on, the service worker shows the push unless a page is focused (sw.ts).
  if (!looking && pushEnabled.value) return;
  // The push's title: machine/session on a hub, and what happened.
  const title = n.title;
  // The buttons are the server's, as its push carries them (internal/notify
  // actionsFor), with the dialog an answer names.
  const actions = n.dialog_id ? (n.actions ?? []) : [];
  if (actions.length > 0 && 'serviceWorker' in navigator) {
    // Buttons need the service worker's notification; a press answers there (sw.ts).
    void registerSW().then((r) =>
      r?.showNotification(title, {
        body,
        tag: `corral-${id}`,
        icon: '/icon-192.png',
        badge: '/icon-192.png',
        requireInteraction: true,
        data: { session_id: id, url: `/#/s/${encodeURIComponent(id)}`, dialog_id: n.dialog_id, title },
        actions,
      } as NotificationOptions),
    );
    return;
  }
  try {
    const shown = new Notification(title, {
      body,
      tag: `corral-${id}`,
      icon: '/icon-192.png',
      badge: '/icon-192.png',
    });
    shown.onclick = () => {
      window.focus();
      openSession(id);
      shown.close();
    };
  } catch {
    // Some browsers (Android Chrome) only allow notifications from the service worker.
    registerSW().then((r) =>
      r?.showNotification(title, {
        body,
        tag: `corral-${id}`,
        icon: '/icon-192.png',
        data: { session_id: id, url: `/#/s/${encodeURIComponent(id)}` },
      }),
    );
  }
}

/** base64url → bytes, for applicationServerKey. */
export function b64urlToBytes(s: string): Uint8Array<ArrayBuffer> {
  const pad = '='.repeat((4 - (s.length % 4)) % 4);
  const b64 = (s + pad).replace(/-/g, '+').replace(/_/g, '/');
  const raw = atob(b64);
  const out = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

export async function enablePush(): Promise<void> {
  if (!pushSupported) throw new Error('this browser has no Web Push');
  const perm = await requestNotificationPermission();
  if (perm !== 'granted') throw new Error('notifications are not allowed for this site');
  const cfg = config.value.vapid_public_key ? config.value : await api.config();
  if (!cfg.vapid_public_key) throw new Error('the server has no VAPID key');
  const reg = await registerSW();
  if (!reg) throw new Error('the service worker did not register');
  await withTimeout(navigator.serviceWorker.ready, 10_000, 'the service worker did not start');
  let sub = await reg.pushManager.getSubscription();
  const key = b64urlToBytes(cfg.vapid_public_key);
  if (sub) {
    // A subscription made with another key cannot be reused.
    const old = sub.options.applicationServerKey;
    if (old && !sameBytes(new Uint8Array(old), key)) {
      await sub.unsubscribe();
      sub = null;
    }
  }
  if (!sub) {
    sub = await withTimeout(
      reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }),
      20_000,
      "the browser's push service did not answer",
    );
  }
  try {
    await api.pushSubscribe(sub.toJSON());
  } catch (e) {
    // 409: this browser's subscription is another user's (they did not
    // log out). A fresh subscription gets a new endpoint, and the old one
    // stops receiving.
    if (!(e instanceof ApiError) || e.status !== 409) throw e;
    await sub.unsubscribe();
    sub = await withTimeout(
      reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }),
      20_000,
      "the browser's push service did not answer",
    );
    await api.pushSubscribe(sub.toJSON());
  }
  pushEnabled.value = true;
}

export async function disablePush(): Promise<void> {
  const reg = await registerSW();
  const sub = await reg?.pushManager.getSubscription();
  if (sub) {
    const endpoint = sub.endpoint;
    await sub.unsubscribe();
    await api.pushUnsubscribe(endpoint);
  }
  pushEnabled.value = false;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(what)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/**
 * Settings' "Send a test": the server pushes to this account's browsers and
 * posts to the webhook; with desktop notifications allowed and no push here,
 * this page shows one itself.
 */
export async function sendTestNotification(): Promise<void> {
  await api.pushTest();
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted' || pushEnabled.value) return;
  const reg = await registerSW();
  const body = "A test notification: this browser shows corral's alerts while the page is open.";
  if (reg) await reg.showNotification('corral', { body, tag: 'corral-test', icon: '/icon-192.png' });
  else new Notification('corral', { body, tag: 'corral-test', icon: '/icon-192.png' });
}

// The first visit's offer to turn notifications on, asked once per browser.
const OFFER_KEY = 'corral.notify.offered';

/** Whether to offer notifications: never asked here, and the browser could show them. */
export const offerNotifications = signal(false);

export function checkNotificationOffer(): void {
  let asked = true;
  try {
    asked = localStorage.getItem(OFFER_KEY) === '1';
  } catch {
    /* no storage: do not nag */
  }
  offerNotifications.value = !asked && notifPermission.value === 'default';
}

/** The offer was answered (either way): it does not come back. */
export function dismissNotificationOffer(): void {
  offerNotifications.value = false;
  try {
    localStorage.setItem(OFFER_KEY, '1');
  } catch {
    /* this page only */
  }
}

/** "Turn on" in the offer: push where the browser has it, else desktop notifications. */
export async function acceptNotificationOffer(): Promise<void> {
  dismissNotificationOffer();
  if (pushSupported && config.value.vapid_public_key) await enablePush();
  else await requestNotificationPermission();
}
