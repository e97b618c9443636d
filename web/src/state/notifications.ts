// The bell's log: notifications from GET /api/v1/notifications and live events.

import { batch, computed, signal } from '@preact/signals';
import { api } from '../api';
import type { NotificationEntry } from '../types';
import { parseTime } from '../util';
import { bellOpen } from './ui';

export const notifications = signal<NotificationEntry[]>([]);
export const unseenNotifications = signal(0);

// What this browser cleared from the bell: everything up to a time ("Clear
// all"), and single entries. Kept in localStorage (bounded); the server's
// log is left alone (other browsers of the account still show it).
const CLEARED_KEY = 'corral.bell.cleared';
const MAX_CLEARED = 200;
interface Cleared {
  before: number;
  keys: string[];
}
function readCleared(): Cleared {
  try {
    const v = JSON.parse(localStorage.getItem(CLEARED_KEY) || '{}') as Partial<Cleared>;
    return {
      before: typeof v.before === 'number' ? v.before : 0,
      keys: Array.isArray(v.keys) ? v.keys.filter((k) => typeof k === 'string').slice(-MAX_CLEARED) : [],
    };
  } catch {
    return { before: 0, keys: [] };
  }
}
export const cleared = signal<Cleared>({ before: 0, keys: [] });

function saveCleared(c: Cleared): void {
  cleared.value = c;
  try {
    localStorage.setItem(CLEARED_KEY, JSON.stringify(c));
  } catch {
    /* private mode: this page only */
  }
}

/** One entry's identity, the same from the log and from a live event. */
export function notificationKey(n: NotificationEntry): string {
  return n.id ? `id:${n.id}` : `${n.session_id}|${n.reason}|${n.time}`;
}

/** The bell's entries, less what this browser cleared. */
export const shownNotifications = computed(() => {
  const c = cleared.value;
  const keys = new Set(c.keys);
  return notifications.value.filter((n) => parseTime(n.time) > c.before && !keys.has(notificationKey(n)));
});

export function clearNotification(n: NotificationEntry): void {
  const c = cleared.value;
  saveCleared({ before: c.before, keys: [...c.keys, notificationKey(n)].slice(-MAX_CLEARED) });
}

export function clearAllNotifications(): void {
  const newest = notifications.value.reduce((m, n) => Math.max(m, parseTime(n.time)), 0);
  saveCleared({ before: Math.max(newest, cleared.value.before), keys: [] });
}

/** Read what this browser cleared (at start). */
export function loadCleared(): void {
  cleared.value = readCleared();
}

export function addNotification(n: NotificationEntry): void {
  const list = notifications.value;
  if (n.seq && list.some((x) => x.seq === n.seq && x.session_id === n.session_id)) return;
  notifications.value = [n, ...list].slice(0, 200);
  if (!bellOpen.value) unseenNotifications.value++;
}

/** The logged entry of id says more now (its dialog's details came after it was logged). */
export function updateNotification(id: number, message: string): void {
  const list = notifications.value;
  if (!list.some((x) => x.id === id)) return;
  notifications.value = list.map((x) => (x.id === id ? { ...x, message } : x));
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

export function resetNotifications(): void {
  batch(() => {
    notifications.value = [];
    unseenNotifications.value = 0;
  });
}
