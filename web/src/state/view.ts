// How the sidebar shows the sessions: groups by project (the repository's
// root), pins, the "needs me first" sort, the filter, and the order j/k and
// "next that needs me" follow.

import { computed, signal } from '@preact/signals';
import type { Session, Status } from '../types';
import { baseName, rollup, urgency } from '../util';
import { machineGroups, machineMode } from './devices';
import { sessions } from './sessions';

export type SortMode = 'created' | 'needs';
export type StateFilter = 'all' | 'attention' | 'busy' | 'idle' | 'exited';

const PINS_KEY = 'corral.pins';
const VIEW_KEY = 'corral.view';
const MAX_PINS = 200;

function readJSON<T>(key: string, fallback: T): T {
  try {
    const v = localStorage.getItem(key);
    return v ? (JSON.parse(v) as T) : fallback;
  } catch {
    return fallback;
  }
}
function writeJSON(key: string, v: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(v));
  } catch {
    /* private mode: this page only */
  }
}

/** Pinned session ids (this browser's). */
export const pins = signal<string[]>([]);
export const sortMode = signal<SortMode>('created');
export const stateFilter = signal<StateFilter>('all');
export const textFilter = signal('');

/** Read the pins and the sort from this browser (at start). */
export function loadView(): void {
  const p = readJSON<unknown>(PINS_KEY, []);
  pins.value = Array.isArray(p) ? p.filter((x): x is string => typeof x === 'string').slice(0, MAX_PINS) : [];
  const v = readJSON<{ sort?: unknown }>(VIEW_KEY, {});
  sortMode.value = v.sort === 'needs' ? 'needs' : 'created';
}

export function togglePin(id: string): void {
  const has = pins.value.includes(id);
  pins.value = has ? pins.value.filter((x) => x !== id) : [...pins.value, id].slice(-MAX_PINS);
  writeJSON(PINS_KEY, pins.value);
}

export function setSortMode(m: SortMode): void {
  sortMode.value = m;
  writeJSON(VIEW_KEY, { sort: m });
}

const FILTER_STATES: Record<StateFilter, Status[] | null> = {
  all: null,
  attention: ['needs-input', 'review'],
  busy: ['busy', 'starting'],
  idle: ['idle', 'unknown'],
  exited: ['exited'],
};

export function matchesFilter(s: Session, st: StateFilter, text: string): boolean {
  const want = FILTER_STATES[st];
  if (want && !want.includes(s.status)) return false;
  const q = text.trim().toLowerCase();
  if (!q) return true;
  return [s.name, s.dir, s.device ?? '', s.git?.branch ?? ''].some((f) => f.toLowerCase().includes(q));
}

/** A session's project: the repository's main working tree, else its folder. */
export function projectOf(s: Session): string {
  return s.worktree?.repo || s.git?.root || s.dir;
}

/** needs-input first, then errors, review, busy...; ties keep their order. */
function sorted(list: Session[]): Session[] {
  if (sortMode.value !== 'needs') return list;
  return list
    .map((s, i) => ({ s, i }))
    .sort((a, b) => urgency(b.s) - urgency(a.s) || a.i - b.i)
    .map((x) => x.s);
}

export interface ProjectGroup {
  /** The project's folder (the group's key). */
  key: string;
  name: string;
  list: Session[];
  /** The highest-priority state of its sessions. */
  status: Status;
  error: boolean;
}

function groupByProject(list: Session[]): ProjectGroup[] {
  const m = new Map<string, Session[]>();
  for (const s of list) {
    const k = projectOf(s);
    const l = m.get(k);
    if (l) l.push(s);
    else m.set(k, [s]);
  }
  const out = [...m.entries()].map(([key, l]) => {
    const r = rollup(l);
    return { key, name: baseName(key) || key, list: sorted(l), status: r.status, error: r.error };
  });
  if (sortMode.value === 'needs') {
    out.sort((a, b) => urgency({ status: b.status, error: b.error ? 'e' : '' }) - urgency({ status: a.status, error: a.error ? 'e' : '' }));
  }
  return out;
}

const visible = computed(() => {
  const st = stateFilter.value;
  const q = textFilter.value;
  return sessions.value.filter((s) => matchesFilter(s, st, q));
});

/** The pinned sessions that pass the filter, in pin order. */
export const pinnedSessions = computed(() => {
  const byId = new Map(visible.value.map((s) => [s.id, s]));
  return sorted(pins.value.map((id) => byId.get(id)).filter((s): s is Session => !!s));
});

/** Single machine: the unpinned sessions that pass the filter, by project. */
export const projectGroups = computed<ProjectGroup[]>(() => {
  const pinned = new Set(pins.value);
  return groupByProject(visible.value.filter((s) => !pinned.has(s.id)));
});

/**
 * Several machines: each machine's sessions that pass the filter (pins stay in place there), and
 * the same by project within the machine (a repository is per machine: its root is a local path).
 */
export const filteredMachineGroups = computed(() =>
  machineGroups.value.map((g) => {
    const list = sorted(g.list.filter((s) => matchesFilter(s, stateFilter.value, textFilter.value)));
    return { ...g, list, projects: groupByProject(list) };
  }),
);

/** Sessions in the order the sidebar shows them (for j/k and "next that needs me"). */
export const sidebarOrder = computed(() =>
  machineMode.value
    ? filteredMachineGroups.value.flatMap((g) => g.projects.flatMap((p) => p.list))
    : [...pinnedSessions.value, ...projectGroups.value.flatMap((g) => g.list)],
);
