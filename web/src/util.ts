import type { Session, Status } from './types';

/** Rank for roll-ups: needs-input > error > review > busy > unknown > starting > idle > exited. */
export function urgency(s: Pick<Session, 'status' | 'error'>): number {
  if (s.status === 'needs-input') return 8;
  if (s.error && s.status !== 'exited') return 7;
  switch (s.status) {
    case 'review':
      return 6;
    case 'busy':
      return 5;
    case 'unknown':
      return 4;
    case 'starting':
      return 3;
    case 'idle':
      return 2;
    case 'exited':
      return 1;
  }
  return 0;
}

/** The roll-up of a group: the most urgent session's status, with error as its own word. */
export function rollup(list: Session[]): { status: Status; error: boolean } {
  let best: Session | undefined;
  for (const s of list) if (!best || urgency(s) > urgency(best)) best = s;
  if (!best) return { status: 'idle', error: false };
  const u = urgency(best);
  return { status: u === 7 ? 'review' : best.status, error: u === 7 };
}

export const STATUS_LABEL: Record<Status, string> = {
  starting: 'Starting',
  idle: 'Idle',
  busy: 'Busy',
  'needs-input': 'Needs input',
  review: 'Review',
  unknown: 'Unknown',
  exited: 'Exited',
};

export function statusLabel(s: Pick<Session, 'status' | 'error'>): string {
  const base = STATUS_LABEL[s.status] ?? s.status;
  return s.error && s.status !== 'exited' ? `${base} (error: ${s.error})` : base;
}

let homeDir = '';
export function setHome(h: string | undefined): void {
  homeDir = (h || '').replace(/\/+$/, '');
}

/** Shorten a path with ~ for the home directory (given by the server, or guessed). */
export function shortDir(p: string): string {
  if (!p) return '';
  if (homeDir && (p === homeDir || p.startsWith(`${homeDir}/`))) return `~${p.slice(homeDir.length)}`;
  const m = /^(\/home\/[^/]+|\/Users\/[^/]+|\/root)(\/.*)?$/.exec(p);
  if (m) return `~${m[2] ?? ''}`;
  return p;
}

export function baseName(p: string): string {
  const t = p.replace(/\/+$/, '');
  const i = t.lastIndexOf('/');
  return i >= 0 ? t.slice(i + 1) || '/' : t;
}

/** 75 → "1:15", 3725 → "1:02:05". */
export function clock(totalSec: number): string {
  const s = Math.max(0, Math.floor(totalSec));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

export function parseTime(t: string | undefined): number {
  if (!t) return 0;
  const v = Date.parse(t);
  // Go's zero time (0001-01-01) means "not set".
  return Number.isFinite(v) && v > 0 ? v : 0;
}

export function ago(t: string | number | undefined, now = Date.now()): string {
  const v = typeof t === 'number' ? t : parseTime(t);
  if (!v) return '';
  const d = Math.max(0, (now - v) / 1000);
  if (d < 45) return 'just now';
  if (d < 3600) return `${Math.round(d / 60)} min ago`;
  if (d < 86400) return `${Math.round(d / 3600)} h ago`;
  if (d < 86400 * 30) return `${Math.round(d / 86400)} d ago`;
  return new Date(v).toLocaleDateString();
}

export function timeOfDay(t: string | undefined): string {
  const v = parseTime(t);
  if (!v) return '';
  return new Date(v).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

export function bytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '';
  if (n < 1024) return `${n} B`;
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${u[i]}`;
}

export function tokens(n: number | undefined): string {
  if (!n) return '0';
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(2)}M`;
}

export function cost(usd: number | undefined): string {
  if (usd === undefined || usd === null) return '';
  return usd < 1 ? `$${usd.toFixed(3)}` : `$${usd.toFixed(2)}`;
}

export function pct(p: number | undefined): string {
  if (p === undefined || p === null || !Number.isFinite(p)) return '';
  return `${Math.round(p)}%`;
}

export function modelName(s: Session): string {
  return s.usage?.model_name || s.usage?.model || '';
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** What a session is doing, in one line: the tool it runs, what it waits for, or its last words. */
export function activity(s: Session): string {
  if (s.status === 'needs-input' && s.waiting_for) {
    const w = s.waiting_for;
    // What the dialog asks, the same words as corral ls and the notifications.
    if (w.summary) return w.summary;
    if (w.kind === 'question') {
      const q = firstQuestion(w.input);
      return q ? `Asks: ${q}` : 'Asks a question';
    }
    if (w.kind === 'elicitation') return w.message || 'Needs input';
    const summary = w.tool ? toolSummary(w.tool, w.input) : '';
    return w.tool ? `Wants ${w.tool}${summary ? `: ${summary}` : ''}` : w.message || 'Needs permission';
  }
  if (s.compacting) return 'Compacting…';
  if (s.status === 'busy' && s.current_tool) return `Running ${s.current_tool}`;
  if (s.error && s.status !== 'exited') return s.error_message || `Error: ${s.error}`;
  if (s.status === 'busy' && s.last_prompt) return s.last_prompt;
  return s.last_message || s.last_prompt || '';
}

/** The running subagents, one a line (a tooltip). */
export function subagentsTitle(s: Session): string {
  const subs = s.subagents ?? [];
  return subs
    .map(
      (a) =>
        `${a.description || a.type || 'subagent'}${a.type && a.description ? ` (${a.type})` : ''}${a.background ? ', in the background' : ''}`,
    )
    .join('\n');
}

/** TodoWrite's progress in words (a tooltip). */
export function todosTitle(s: Session): string {
  const t = s.todos;
  if (!t) return '';
  return `${t.done} of ${t.total} todos done${t.current ? `; now: ${t.current}` : ''}`;
}

export function firstQuestion(input: unknown): string {
  if (!isObject(input)) return '';
  const qs = input['questions'];
  if (Array.isArray(qs) && qs.length > 0 && isObject(qs[0])) return str(qs[0]['question']);
  return str(input['question']);
}

/** A compact summary of a tool's input (the Bash command, the file path...). */
export function toolSummary(name: string, input: unknown): string {
  if (!isObject(input)) return typeof input === 'string' ? input : '';
  const pick = (...keys: string[]) => {
    for (const k of keys) {
      const v = input[k];
      if (typeof v === 'string' && v) return v;
    }
    return '';
  };
  switch (name) {
    case 'Bash':
      return pick('command');
    case 'Read':
    case 'Write':
    case 'Edit':
    case 'MultiEdit':
    case 'NotebookEdit':
      return shortDir(pick('file_path', 'notebook_path'));
    case 'Grep':
      return [pick('pattern'), pick('path', 'glob')].filter(Boolean).join('  in ');
    case 'Glob':
      return pick('pattern');
    case 'WebFetch':
      return pick('url');
    case 'WebSearch':
      return pick('query');
    case 'Task':
    case 'Agent':
      return pick('description', 'prompt');
    case 'TodoWrite': {
      const t = input['todos'];
      return Array.isArray(t) ? `${t.length} todo${t.length === 1 ? '' : 's'}` : '';
    }
    case 'AskUserQuestion':
      return firstQuestion(input);
  }
  const first = pick('command', 'file_path', 'path', 'url', 'query', 'pattern', 'description', 'prompt');
  if (first) return first;
  for (const v of Object.values(input)) if (typeof v === 'string' && v) return v;
  return '';
}

export function pretty(v: unknown): string {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v, null, 2) ?? '';
  } catch {
    return String(v);
  }
}

export function oneLine(s: string, max = 200): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

export const isNarrow = () => window.matchMedia('(max-width: 767.98px)').matches;

export function debounce<A extends unknown[]>(fn: (...a: A) => void, ms: number): ((...a: A) => void) & { cancel(): void } {
  let t: ReturnType<typeof setTimeout> | undefined;
  const f = (...a: A) => {
    if (t) clearTimeout(t);
    t = setTimeout(() => {
      t = undefined;
      fn(...a);
    }, ms);
  };
  f.cancel = () => {
    if (t) clearTimeout(t);
    t = undefined;
  };
  return f;
}

/** Markdown as plain text, for one line of a notification: no markers, links as their text. */
export function plainText(md: string): string {
  return md
    .replace(/```[^\n]*\n?/g, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,!?:;]|$)/g, '$1$2')
    .replace(/^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+\[[ xX]\]\s+|[-*+]\s+|\d+[.)]\s+)/gm, '')
    .replace(/\s+/g, ' ')
    .trim();
}
