// How far the person had read each session's timeline when they last looked
// (left the session, switched to the terminal, or hid the page): the next
// visit draws "New since you last looked" before the first newer item.
// Kept in this browser's localStorage, at most MAX_SEEN sessions (the least
// recently looked at go first).

const SEEN_KEY = 'corral.seen';
const MAX_SEEN = 300;

/** The last timeline item seen: its id, and its time as a fallback once the id is gone. */
export interface SeenMark {
  id: string;
  /** The item's time (ms since the epoch; 0 when it had none). */
  time: number;
  /** When it was recorded (ms), to forget the oldest. */
  at: number;
}

function readAll(): Record<string, SeenMark> {
  try {
    const v = JSON.parse(localStorage.getItem(SEEN_KEY) || '{}') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, SeenMark>) : {};
  } catch {
    return {};
  }
}

/** The mark of a session, if this browser has one. */
export function seenMark(session: string): SeenMark | null {
  const m = readAll()[session];
  return m && typeof m.id === 'string' && typeof m.time === 'number' ? m : null;
}

/** Record a session's mark, forgetting the oldest beyond MAX_SEEN. */
export function setSeenMark(session: string, id: string, time: number): void {
  const all = readAll();
  all[session] = { id: id.slice(0, 200), time, at: Date.now() };
  let keys = Object.keys(all);
  if (keys.length > MAX_SEEN) {
    keys = keys.sort((a, b) => (all[b]?.at ?? 0) - (all[a]?.at ?? 0));
    for (const k of keys.slice(MAX_SEEN)) delete all[k];
  }
  try {
    localStorage.setItem(SEEN_KEY, JSON.stringify(all));
  } catch {
    /* private mode or full: the divider is only for this page */
  }
}
