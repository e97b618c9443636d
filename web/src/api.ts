// The HTTP side of docs/web-protocol.md: cookie auth, the CSRF header on
// state-changing requests, 401 → login screen.

import { ops, type OpName, type OpTypes } from './api.gen';
import type {
  AnswerRequest,
  AuthMe,
  CreateRequest,
  DownloadRequest,
  GitDiffRequest,
  KillRequest,
  LoginRequest,
  NotificationEntry,
  WebConfig,
  WebSession,
} from './types';

export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
    public body?: unknown,
    public retryAfter?: number,
  ) {
    super(message);
  }
}

type UnauthorizedHandler = (body: unknown) => void;
let onUnauthorized: UnauthorizedHandler = () => {};

/** Called with the 401 body whenever an /api call answers 401. */
export function setUnauthorizedHandler(fn: UnauthorizedHandler): void {
  onUnauthorized = fn;
}

/** Tell the app we are logged out (a probe that found out some other way, e.g. a refused WebSocket). */
export function reportUnauthorized(body: unknown): void {
  onUnauthorized(body);
}

export function cookie(name: string): string {
  for (const part of document.cookie.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    if (part.slice(0, i).trim() === name) {
      try {
        return decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        return part.slice(i + 1).trim();
      }
    }
  }
  return '';
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface RequestOpts {
  /** Do not fire the global 401 handler (auth probes). */
  quiet401?: boolean;
  signal?: AbortSignal;
}

export async function request<T>(method: string, path: string, body?: unknown, opts: RequestOpts = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (UNSAFE.has(method)) headers['X-Corral-CSRF'] = cookie('corral_csrf');
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
      signal: opts.signal,
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, 'network', `network error: ${(e as Error).message}`);
  }
  const text = await res.text();
  let data: unknown;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) {
    const obj = (data && typeof data === 'object' ? data : {}) as { code?: string; error?: string };
    if (res.status === 401 && !opts.quiet401) onUnauthorized(data);
    const ra = Number(res.headers.get('Retry-After'));
    throw new ApiError(
      res.status,
      obj.code || String(res.status),
      obj.error || obj.code || (typeof data === 'string' && data ? data : res.statusText || 'request failed'),
      data,
      Number.isFinite(ra) && ra > 0 ? ra : undefined,
    );
  }
  return data as T;
}

const enc = encodeURIComponent;

/**
 * Runs an operation of the generated table (internal/api): the session's id
 * goes in the path, a GET's request in the query, any other's in the body.
 */
export function call<K extends OpName>(name: K, req: OpTypes[K]['req'], id?: string, opts: RequestOpts = {}): Promise<OpTypes[K]['res']> {
  const op = ops[name];
  let path: string = op.path;
  if (path.includes('{id}')) path = path.replace('{id}', enc(id ?? ''));
  const fields = Object.entries(req as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (op.method === 'GET') {
    const q = new URLSearchParams(fields.filter(([, v]) => v !== '').map(([k, v]) => [k, String(v)]));
    return request<OpTypes[K]['res']>('GET', q.size ? `${path}?${q}` : path, undefined, opts);
  }
  return request<OpTypes[K]['res']>(op.method, path, fields.length ? req : undefined, opts);
}

export const api = {
  me: () => request<AuthMe>('GET', '/api/v1/auth/me', undefined, { quiet401: true }),
  login: (body: LoginRequest) => request<unknown>('POST', '/api/v1/auth/login', body, { quiet401: true }),
  // A JSON body: the server refuses a logout that a form of another site could send.
  logout: () => request<unknown>('POST', '/api/v1/auth/logout', {}, { quiet401: true }),
  webSessions: () => request<WebSession[]>('GET', '/api/v1/auth/sessions'),
  endWebSession: (id: string) => request<void>('DELETE', `/api/v1/auth/sessions/${enc(id)}`),
  devices: () => call('devices', {}),
  config: (): Promise<WebConfig> => call('web_config', {}),
  sessions: () => call('sessions', {}),
  create: (body: CreateRequest) => call('create', body),
  rename: (id: string, name: string) => call('rename', { name }, id),
  kill: (id: string, req: KillRequest = {}) => call('kill', req, id),
  gitStatus: (id: string) => call('git_status', {}, id),
  gitDiff: (id: string, req: GitDiffRequest = {}) => call('git_diff', req, id),
  /** Refused while a dialog is open (dialog_open), over a draft typed elsewhere (draft_present, unless clearDraft), or when the screen is unclear (screen_unclear). */
  input: (id: string, text: string, enter: boolean, clearDraft = false) =>
    call('input', clearDraft ? { text, enter, clear_draft: true } : { text, enter }, id),
  keys: (id: string, keys: string[]) => call('keys', { keys }, id),
  answer: (id: string, req: AnswerRequest) => call('answer', req, id),
  restart: (id: string, resume: boolean) => call('restart', { resume }, id),
  viewed: (id: string) => call('viewed', {}, id),
  download: (id: string, body: DownloadRequest) => call('download', body, id),
  /** With since (an earlier answer's cursor): only the items new or changed after it. */
  timeline: (id: string, since: string, signal?: AbortSignal) => call('timeline', { since }, id, { signal }),
  dirs: (path: string, device?: string) => call('dirs', { path, device }),
  resumable: (dir: string, device?: string) => call('resumable', { dir, device }),
  // The log's entries, as the bell keeps them (live ones carry a seq).
  notifications: () => request<NotificationEntry[] | null>(ops.notifications.method, ops.notifications.path),
  // The browser's own object, as it is: the server ignores what it does not read.
  pushSubscribe: (sub: PushSubscriptionJSON) => request<unknown>(ops.push_subscribe.method, ops.push_subscribe.path, sub),
  pushUnsubscribe: (endpoint: string) => call('push_unsubscribe', { endpoint }),
  pushTest: () => call('push_test', {}),
  settings: (s: { webhook_url: string }) => call('settings', s),
};

/** ws:// or wss:// URL for a path on this origin. */
export function wsURL(path: string): string {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${proto}//${location.host}${path}`;
}

export function errorText(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.status === 429 && e.retryAfter) return `${e.message} (retry in ${e.retryAfter} s)`;
    return e.message;
  }
  if (e instanceof Error) return e.message;
  return String(e);
}
