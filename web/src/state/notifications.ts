// The bell's log: notifications from GET /api/v1/notifications and live events.

import { batch, signal } from '@preact/signals';
import { api } from '../api';
import type { NotificationEntry } from '../types';
import { parseTime } from '../util';
import { bellOpen } from './ui';

export const notifications = signal<NotificationEntry[]>([]);
export const unseenNotifications = signal(0);

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

export function resetNotifications(): void {
  batch(() => {
    notifications.value = [];
    unseenNotifications.value = 0;
  });
}
