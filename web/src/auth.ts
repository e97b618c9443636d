// Logging in and out: what the app does when it learns it is (no longer) logged in.

import { api, ApiError, setUnauthorizedHandler } from './api';
import { events } from './events';
import { checkNotificationOffer, disablePush, forgetCSRF, pushEnabled, registerSW, shareCSRF } from './notify';
import {
  applyMe,
  auth,
  closeSession,
  config,
  loadConfig,
  loadNotifications,
  resetState,
} from './store';
import type { AuthMe } from './types';
import { setHome } from './util';

/** Logged in: start the live parts. me: what /api/v1/auth/me said, when we have it. */
export function start(me?: AuthMe): void {
  if (me) applyMe(me);
  else void api.me().then(applyMe, () => {});
  auth.value = 'ok';
  events.start();
  void loadConfig().then(() => setHome(config.value.home));
  void loadNotifications();
  void registerSW();
  void shareCSRF();
  checkNotificationOffer();
}

/** Not logged in (any more): stop, forget the user's data, show the login screen. */
export function toLogin(body?: unknown): void {
  applyMe(body as AuthMe | undefined);
  if (auth.value === 'login') return;
  events.stop();
  events.forget();
  void forgetCSRF();
  resetState();
  auth.value = 'login';
}

/** After a successful POST /api/v1/auth/login. */
export async function loggedIn(): Promise<void> {
  let me: AuthMe | undefined;
  try {
    me = await api.me();
  } catch {
    /* start anyway; the next request tells */
  }
  start(me);
}

/** Log out: this browser stops getting the user's pushes, the cookies go, back to the login screen. */
export async function logout(): Promise<void> {
  if (pushEnabled.value) {
    await Promise.race([disablePush().catch(() => {}), new Promise((r) => setTimeout(r, 3000))]);
  }
  try {
    await api.logout();
  } catch {
    /* the cookies may be gone already */
  }
  closeSession();
  toLogin();
  try {
    // Refresh what the login form needs (multi_user, password_set).
    applyMe(await api.me());
  } catch (e) {
    if (e instanceof ApiError) applyMe(e.body as AuthMe | undefined);
  }
}

/** A 401 from any request sends the app to the login screen (called once, from main.tsx). */
export function installAuthHandler(): void {
  setUnauthorizedHandler((body) => toLogin(body));
}
