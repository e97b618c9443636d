// The open session and tab (#/s/<id>[/terminal|/timeline]), moving between
// sessions, and review → idle when a person looks.

import { batch, computed, signal } from '@preact/signals';
import { api } from '../api';
import type { Session } from '../types';
import { isNarrow } from '../util';
import { sessionsById } from './sessions';
import { sidebarOpen, toastError } from './ui';
import { sidebarOrder } from './view';

export type Tab = 'terminal' | 'timeline';

export const selectedId = signal<string | null>(null);
export const selected = computed(() => (selectedId.value ? sessionsById.value[selectedId.value] : undefined));
export const tab = signal<Tab>(isNarrow() ? 'timeline' : 'terminal');


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
      if (h.id) dwell(h.id);
    }
    if (h.tab) tab.value = h.tab;
  });
}

export function openSession(id: string, t?: Tab): void {
  sidebarOpen.value = false;
  const target = `#/s/${encodeURIComponent(id)}${t ? `/${t}` : ''}`;
  if (t) tab.value = t;
  if (location.hash !== target) location.hash = target;
  else applyHash();
  if (selectedId.value !== id) {
    selectedId.value = id;
  }
  dwell(id);
}

export function setTab(t: Tab): void {
  tab.value = t;
  const id = selectedId.value;
  if (id) history.replaceState(null, '', `#/s/${encodeURIComponent(id)}/${t}`);
}

export function closeSession(): void {
  stopDwell();
  selectedId.value = null;
  history.replaceState(null, '', location.pathname + location.search);
}

/**
 * Open the next session that needs the person (needs-input first, then
 * review), after the open one in sidebar order, wrapping around.
 */
export function nextNeedsMe(): boolean {
  const list = sidebarOrder.value;
  const i = list.findIndex((s) => s.id === selectedId.value);
  const after = [...list.slice(i + 1), ...list.slice(0, i + 1)];
  const s =
    after.find((x) => x.status === 'needs-input' && !x.offline && x.id !== selectedId.value) ??
    after.find((x) => x.status === 'review' && !x.offline && x.id !== selectedId.value);
  if (!s) return false;
  openSession(s.id);
  return true;
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

/** How long a session must be open, the page visible, before it counts as seen (a j/k pass does not). */
export const DWELL_MS = 1500;
let dwellTimer: ReturnType<typeof setTimeout> | undefined;
let dwellId = '';

/** The open session in review is seen once it stayed open and visible for DWELL_MS (a running wait goes on). */
function dwell(id: string): void {
  if (dwellId === id) return;
  clearTimeout(dwellTimer);
  dwellId = id;
  dwellTimer = setTimeout(() => {
    dwellId = '';
    if (selectedId.value === id && document.visibilityState === 'visible') markViewedIfReview(id);
  }, DWELL_MS);
}

function stopDwell(): void {
  clearTimeout(dwellTimer);
  dwellId = '';
}

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

/** After a snapshot: a session opened by URL before the sessions were known is seen now. */
export function afterSnapshot(): void {
  const id = selectedId.value;
  if (id && document.visibilityState === 'visible') dwell(id);
}

/** After a session event: the open, visible session that moved into review is seen. */
export function afterSessionEvent(s: Session): void {
  if (s.id === selectedId.value && s.status === 'review' && !s.offline && document.visibilityState === 'visible') {
    dwell(s.id);
  }
}

/** Follow the URL and the page's visibility (called once, from main.tsx). */
export function startRouting(): void {
  applyHash();
  window.addEventListener('hashchange', applyHash);
  document.addEventListener('visibilitychange', () => {
    const id = selectedId.value;
    if (document.visibilityState === 'visible' && id) dwell(id);
    else stopDwell();
  });
}
