// App state as Preact signals, and the actions on it.

import { batch, computed, signal } from '@preact/signals';
import { api, errorText } from './api';
import type { NotificationEntry, Session, WebConfig } from './types';
import { isNarrow, parseTime } from './util';

export type Tab = 'terminal' | 'timeline';
export type AuthState = 'checking' | 'ok' | 'login';
export type ConnState = 'connecting' | 'open' | 'reconnecting';

export const auth = signal<AuthState>('checking');
/** null when unknown (the 401 body did not say). */
export const passwordSet = signal<boolean | null>(null);

export const sessionsById = signal<Record<string, Session>>({});
/** Sessions ordered by creation (then id, for a stable order). */
export const sessions = computed(() =>
  Object.values(sessionsById.value).sort((a, b) => {
    const d = parseTime(a.created_at) - parseTime(b.created_at);
    return d !== 0 ? d : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  }),
);
/** Whether we hold the first snapshot yet. */
export const loaded = signal(false);

export const selectedId = signal<string | null>(null);
export const selected = computed(() => (selectedId.value ? sessionsById.value[selectedId.value] : undefined));
export const tab = signal<Tab>(isNarrow() ? 'timeline' : 'terminal');

export const conn = signal<ConnState>('connecting');
export const connSince = signal<number>(Date.now());
export const lastSeq = signal<number>(0);

export const config = signal<WebConfig>({});
export const notifications = signal<NotificationEntry[]>([]);
export const unseenNotifications = signal(0);

export const needsYou = computed(() => sessions.value.filter((s) => s.status === 'needs-input'));
export const attention = computed(() =>
  sessions.value.filter((s) => s.status === 'needs-input' || s.status === 'review'),
);
export const hasDevices = computed(() => sessions.value.some((s) => !!s.device));

/** Phone layout (< 768 px). */
export const narrow = signal(isNarrow());
window.matchMedia('(max-width: 767.98px)').addEventListener('change', (e) => {
  narrow.value = e.matches;
  if (!e.matches) sidebarOpen.value = false;
});

// Panels.
export const sidebarOpen = signal(false); // the drawer on phones
export const bellOpen = signal(false);
export const settingsOpen = signal(false);
export const newSessionOpen = signal(false);
export const helpOpen = signal(false);

/** Ticks every second while anything shows a running clock. */
export const now = signal(Date.now());
setInterval(() => {
  if (sessions.value.some((s) => s.status === 'busy' && s.busy_since) || conn.value !== 'open') {
    now.value = Date.now();
  }
}, 1000);

export interface Toast {
  id: number;
  text: string;
  kind: 'error' | 'info';
}
export const toasts = signal<Toast[]>([]);
let toastSeq = 0;
export function toast(text: string, kind: Toast['kind'] = 'error', ms = 5000): void {
  const id = ++toastSeq;
  toasts.value = [...toasts.value, { id, text, kind }].slice(-4);
  setTimeout(() => dismissToast(id), ms);
}
export function dismissToast(id: number): void {
  toasts.value = toasts.value.filter((t) => t.id !== id);
}
export function toastError(prefix: string) {
  return (e: unknown) => toast(`${prefix}: ${errorText(e)}`);
}

// ---- sessions -------------------------------------------------------------

export function setSnapshot(list: Session[]): void {
  const m: Record<string, Session> = {};
  for (const s of list) m[s.id] = s;
  batch(() => {
    sessionsById.value = m;
    loaded.value = true;
  });
  // Opened by URL before the sessions were known: the open session in review is seen now.
  const id = selectedId.value;
  if (id && document.visibilityState === 'visible') markViewedIfReview(id);
}

export function upsertSession(s: Session): void {
  sessionsById.value = { ...sessionsById.value, [s.id]: s };
}

export function removeSession(id: string): void {
  if (!(id in sessionsById.value)) return;
  const m = { ...sessionsById.value };
  delete m[id];
  sessionsById.value = m;
}

// ---- routing: #/s/<id>[/terminal|/timeline] -------------------------------

function parseHash(): { id: string | null; tab: Tab | null } {
  const m = /^#\/s\/([^/]+)(?:\/(terminal|timeline))?/.exec(location.hash);
  if (!m || !m[1]) return { id: null, tab: null };
  let id = m[1];
  try {
    id = decodeURIComponent(id);
  } catch {
    /* keep raw */
  }
  return { id, tab: (m[2] as Tab | undefined) ?? null };
}

export function applyHash(): void {
  const h = parseHash();
  batch(() => {
    if (h.id !== selectedId.value) {
      selectedId.value = h.id;
      if (h.id) markViewedIfReview(h.id);
    }
    if (h.tab) tab.value = h.tab;
  });
}

export function openSession(id: string, t?: Tab): void {
  sidebarOpen.value = false;
  const target = `#/s/${encodeURIComponent(id)}${t ? '/' + t : ''}`;
  if (t) tab.value = t;
  if (location.hash !== target) location.hash = target;
  else applyHash();
  if (selectedId.value !== id) {
    selectedId.value = id;
  }
  markViewedIfReview(id);
}

export function setTab(t: Tab): void {
  tab.value = t;
  const id = selectedId.value;
  if (id) history.replaceState(null, '', `#/s/${encodeURIComponent(id)}/${t}`);
}

export function closeSession(): void {
  selectedId.value = null;
  history.replaceState(null, '', location.pathname + location.search);
}

/** Move the selection by delta in sidebar order (j/k). */
export function moveSelection(delta: number): void {
  const list = sessions.value;
  if (list.length === 0) return;
  const i = list.findIndex((s) => s.id === selectedId.value);
  const n = i < 0 ? (delta > 0 ? 0 : list.length - 1) : Math.min(list.length - 1, Math.max(0, i + delta));
  const s = list[n];
  if (s) openSession(s.id);
}

// ---- review → idle when a person looks -----------------------------------

const viewing = new Set<string>();
export function markViewed(id: string): void {
  if (viewing.has(id)) return;
  viewing.add(id);
  api
    .viewed(id)
    .catch(toastError('Mark seen failed'))
    .finally(() => viewing.delete(id));
}

export function markViewedIfReview(id: string): void {
  const s = sessionsById.value[id];
  if (s && s.status === 'review') markViewed(id);
}

/** After a session event: the open, visible session that moved into review is seen. */
export function onSessionEvent(s: Session): void {
  if (s.id === selectedId.value && s.status === 'review' && document.visibilityState === 'visible') {
    markViewed(s.id);
  }
}

document.addEventListener('visibilitychange', () => {
  const id = selectedId.value;
  if (document.visibilityState === 'visible' && id) markViewedIfReview(id);
});

// ---- notifications -------------------------------------------------------

export function addNotification(n: NotificationEntry): void {
  const list = notifications.value;
  if (n.seq && list.some((x) => x.seq === n.seq && x.session_id === n.session_id)) return;
  notifications.value = [n, ...list].slice(0, 200);
  if (!bellOpen.value) unseenNotifications.value++;
}

export async function loadNotifications(): Promise<void> {
  try {
    const list = (await api.notifications()) ?? [];
    const live = notifications.value.filter((n) => n.live && !list.some((x) => x.seq === n.seq));
    const merged = [...live, ...list].sort((a, b) => parseTime(b.time) - parseTime(a.time));
    notifications.value = merged.slice(0, 200);
  } catch {
    /* the drawer shows what it has */
  }
}

export async function loadConfig(): Promise<void> {
  try {
    config.value = (await api.config()) ?? {};
  } catch {
    /* optional */
  }
}
