// App state as Preact signals, and the actions on it.

import { batch, computed, signal } from '@preact/signals';
import { api, errorText } from './api';
import type { AuthMe, Device, NotificationEntry, Session, WebConfig } from './types';
import { isNarrow, parseTime } from './util';

export type Tab = 'terminal' | 'timeline';
export type AuthState = 'checking' | 'ok' | 'login';
export type ConnState = 'connecting' | 'open' | 'reconnecting';

export const auth = signal<AuthState>('checking');
/** null when unknown (the 401 body did not say). */
export const passwordSet = signal<boolean | null>(null);
/** A hub: many users (the login asks for a name) and many machines. */
export const multiUser = signal(false);
/** Who is logged in ('' when unknown). */
export const currentUser = signal('');

/** Take what GET /api/v1/auth/me (or its 401 body) says. */
export function applyMe(b: AuthMe | undefined | null): void {
  if (!b || typeof b !== 'object') return;
  batch(() => {
    if (typeof b.password_set === 'boolean') passwordSet.value = b.password_set;
    if (typeof b.multi_user === 'boolean') multiUser.value = b.multi_user;
    if (typeof b.user === 'string') currentUser.value = b.user;
  });
}

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

// ---- machines ---------------------------------------------------------------

/** The machines GET /api/v1/devices lists (a single-machine corral serve lists at most itself). */
export const devices = signal<Device[]>([]);
export const devicesLoaded = signal(false);
/** Several machines (a hub): the sidebar groups sessions by machine, new sessions ask which. */
export const machineMode = computed(
  () => multiUser.value || devices.value.length > 1 || sessions.value.some((s) => !!s.device),
);

/**
 * Every machine to show: the listed ones, plus names that only sessions carry
 * (listed on the next refresh; until then, online unless all their sessions are offline).
 */
export const knownDevices = computed<Device[]>(() => {
  const out = [...devices.value];
  const seen = new Set(out.map((d) => d.name));
  const extra = new Map<string, boolean>();
  for (const s of sessions.value) {
    if (!s.device || seen.has(s.device)) continue;
    extra.set(s.device, (extra.get(s.device) ?? false) || !s.offline);
  }
  for (const [name, online] of extra) out.push({ id: name, name, online });
  return out.sort((a, b) => a.name.localeCompare(b.name));
});

export function deviceNamed(name: string | undefined): Device | undefined {
  if (!name) return undefined;
  return knownDevices.value.find((d) => d.name === name);
}

export interface MachineGroup {
  name: string;
  device?: Device;
  list: Session[];
}

/** The sidebar's groups in machine mode: every machine, with its sessions (maybe none). */
export const machineGroups = computed<MachineGroup[]>(() => {
  const m = new Map<string, MachineGroup>();
  for (const d of knownDevices.value) m.set(d.name, { name: d.name, device: d, list: [] });
  const local = config.value.hostname || 'this machine';
  for (const s of sessions.value) {
    const k = s.device || local;
    let g = m.get(k);
    if (!g) {
      g = { name: k, list: [] };
      m.set(k, g);
    }
    g.list.push(s);
  }
  return [...m.values()].sort((a, b) => a.name.localeCompare(b.name));
});

/** Sessions in the order the sidebar shows them (for j/k). */
export const sidebarOrder = computed(() =>
  machineMode.value ? machineGroups.value.flatMap((g) => g.list) : sessions.value,
);

let devicesInFlight: Promise<void> | null = null;
let devicesAgain = false;

/** Refresh the machine list (one request at a time; a call meanwhile asks for one more). */
export function loadDevices(): Promise<void> {
  if (devicesInFlight) {
    devicesAgain = true;
    return devicesInFlight;
  }
  devicesInFlight = (async () => {
    try {
      do {
        devicesAgain = false;
        try {
          const list = (await api.devices()) ?? [];
          batch(() => {
            devices.value = Array.isArray(list) ? list : [];
            devicesLoaded.value = true;
          });
        } catch {
          /* keep what we have; the next refresh tries again */
        }
      } while (devicesAgain && auth.value === 'ok');
    } finally {
      devicesInFlight = null;
    }
  })();
  return devicesInFlight;
}

/** The machines as the events say (a snapshot's devices, then device events): nothing is polled. */
export function setDevices(list: Device[]): void {
  batch(() => {
    devices.value = list;
    devicesLoaded.value = true;
  });
}

export function upsertDevice(d: Device): void {
  const list = devices.value.filter((x) => x.id !== d.id);
  list.push(d);
  list.sort((a, b) => a.name.localeCompare(b.name));
  devices.value = list;
}

export function removeDevice(id: string): void {
  devices.value = devices.value.filter((x) => x.id !== id);
}

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
/** The machine the new-session dialog starts on (a group's + button); '' = ask. */
export const newSessionDevice = signal('');

export function openNewSession(device = ''): void {
  newSessionDevice.value = device;
  newSessionOpen.value = true;
}
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

export function setSnapshot(list: Session[], devs: Device[]): void {
  const m: Record<string, Session> = {};
  for (const s of list) m[s.id] = s;
  batch(() => {
    sessionsById.value = m;
    loaded.value = true;
    setDevices(devs);
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
  const list = sidebarOrder.value;
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
  // An offline session cannot be told (its machine is away); it is marked when it is back.
  if (s && s.status === 'review' && !s.offline) markViewed(id);
}

/** After a session event: the open, visible session that moved into review is seen. */
export function onSessionEvent(s: Session): void {
  if (s.id === selectedId.value && s.status === 'review' && !s.offline && document.visibilityState === 'visible') {
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
    // A live entry is dropped once the log has it (same session and reason, within a few seconds).
    const live = notifications.value.filter(
      (n) =>
        n.live &&
        !list.some(
          (x) =>
            (x.seq && x.seq === n.seq) ||
            (x.session_id === n.session_id && x.reason === n.reason && Math.abs(parseTime(x.time) - parseTime(n.time)) < 10_000),
        ),
    );
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

/** Forget everything of the logged-in user (logged out, or the session expired). */
export function resetState(): void {
  batch(() => {
    sessionsById.value = {};
    loaded.value = false;
    lastSeq.value = 0;
    devices.value = [];
    devicesLoaded.value = false;
    notifications.value = [];
    unseenNotifications.value = 0;
    currentUser.value = '';
    config.value = {};
    sidebarOpen.value = false;
    bellOpen.value = false;
    settingsOpen.value = false;
    newSessionOpen.value = false;
    helpOpen.value = false;
  });
}
