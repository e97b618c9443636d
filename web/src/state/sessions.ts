// The sessions as the events stream last said, and the stream's own state.

import { batch, computed, signal } from '@preact/signals';
import { api } from '../api';
import type { Session, WebConfig } from '../types';
import { parseTime } from '../util';

export type ConnState = 'connecting' | 'open' | 'reconnecting';

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

export const needsYou = computed(() => sessions.value.filter((s) => s.status === 'needs-input'));
export const attention = computed(() => sessions.value.filter((s) => s.status === 'needs-input' || s.status === 'review'));

export const conn = signal<ConnState>('connecting');
export const connSince = signal<number>(Date.now());
export const lastSeq = signal<number>(0);

/** What GET /api/v1/config says (the push key, the version, the host name). */
export const config = signal<WebConfig>({});

export async function loadConfig(): Promise<void> {
  try {
    config.value = (await api.config()) ?? {};
  } catch {
    /* optional */
  }
}

export function applySnapshot(list: Session[]): void {
  const m: Record<string, Session> = {};
  for (const s of list) m[s.id] = s;
  batch(() => {
    sessionsById.value = m;
    loaded.value = true;
  });
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

export function resetSessions(): void {
  batch(() => {
    sessionsById.value = {};
    loaded.value = false;
    lastSeq.value = 0;
    config.value = {};
  });
}
