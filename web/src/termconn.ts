// The terminal WebSocket of docs/web-protocol.md: binary frames, a stream id
// from hello, byte offsets, resume with stream+offset after a dropped
// connection, reset, ping every 15 s, reconnect with backoff.

import { wsURL } from './api';

// Server → client.
export const T_OUTPUT = 0x01;
export const T_HELLO = 0x02;
export const T_RESET = 0x03;
export const T_PONG = 0x04;
export const T_EXIT = 0x05;
// Client → server.
export const T_INPUT = 0x11;
export const T_RESIZE = 0x12;
export const T_PING = 0x13;

const PING_MS = 15_000;
const SILENCE_MS = 45_000;
const BACKOFF_MIN = 500;
const BACKOFF_MAX = 10_000;
/** Keystrokes typed while disconnected are kept (up to this much) and sent on reconnect. */
const MAX_PENDING_INPUT = 4096;

export type TermConnState = 'connecting' | 'open' | 'reconnecting' | 'exited' | 'closed';

export interface TermSink {
  output(data: Uint8Array): void;
  reset(): void;
  exit(reason: string): void;
  state(s: TermConnState): void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class TermConn {
  socket: WebSocket | null = null;
  /** The stream id from hello ('' before the first hello). */
  streamId = '';
  /** The next byte offset we expect (the `offset` to resume from). */
  offset = 0;
  connState: TermConnState = 'connecting';
  /** Counters, for tests and diagnostics. */
  connects = 0;
  resets = 0;
  duplicateBytes = 0;
  gapBytes = 0;
  bytesIn = 0;
  lastExit = '';

  private cols: number;
  private rows: number;
  private attempts = 0;
  private opened = false;
  private closed = false;
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private silenceTimer: ReturnType<typeof setTimeout> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly sessionId: string,
    private sink: TermSink,
    size: { cols: number; rows: number },
  ) {
    this.cols = size.cols;
    this.rows = size.rows;
  }

  start(): void {
    this.closed = false;
    this.connect();
  }

  /** Close for good (the view went away). The server keeps the stream 60 s, then drops it. */
  close(): void {
    this.closed = true;
    this.clearTimers();
    const ws = this.socket;
    this.socket = null;
    if (ws) ws.close(1000, 'bye');
    this.setState('closed');
  }

  /** Test hook: drop the connection as a network failure would; it reconnects and resumes. */
  drop(): void {
    const ws = this.socket;
    if (!ws) return;
    // Detach first: on a dead network the closing handshake may never finish.
    this.socket = null;
    this.opened = false;
    this.clearTimers();
    try {
      ws.close(4001, 'dropped');
    } catch {
      /* already closed */
    }
    if (this.closed || this.connState === 'exited') return;
    this.setState('reconnecting');
    this.scheduleRetry();
  }

  /** Reconnect now (after an exit, or from a button). keepStream=false opens a new stream. */
  reconnect(keepStream = true): void {
    if (!keepStream) {
      this.streamId = '';
      this.offset = 0;
    }
    this.closed = false;
    const ws = this.socket;
    this.socket = null;
    if (ws) ws.close(1000, 'reconnect');
    this.clearTimers();
    this.attempts = 0;
    this.connect();
  }

  input(data: string): void {
    this.sendFrame(T_INPUT, encoder.encode(data), true);
  }

  /** Bytes as xterm's onBinary gives them (one char per byte). */
  inputBinary(data: string): void {
    const b = new Uint8Array(data.length);
    for (let i = 0; i < data.length; i++) b[i] = data.charCodeAt(i) & 0xff;
    this.sendFrame(T_INPUT, b, true);
  }

  /** force: send even when the size is the same (taking the window back from another viewer). */
  resize(cols: number, rows: number, force = false): void {
    if (cols < 1 || rows < 1) return;
    if (cols === this.cols && rows === this.rows && !force) return;
    this.cols = cols;
    this.rows = rows;
    this.sendResize();
  }

  private sendResize(): void {
    const b = new Uint8Array(4);
    const v = new DataView(b.buffer);
    v.setUint16(0, Math.min(this.cols, 0xffff));
    v.setUint16(2, Math.min(this.rows, 0xffff));
    this.sendFrame(T_RESIZE, b, false);
  }

  private sendFrame(type: number, payload: Uint8Array, queue: boolean): void {
    const ws = this.socket;
    const frame = new Uint8Array(1 + payload.length);
    frame[0] = type;
    frame.set(payload, 1);
    if (ws && ws.readyState === WebSocket.OPEN && this.opened) {
      ws.send(frame);
      return;
    }
    if (queue && !this.closed && this.connState !== 'exited' && this.pendingBytes + frame.length <= MAX_PENDING_INPUT) {
      this.pending.push(frame);
      this.pendingBytes += frame.length;
    }
  }

  private setState(s: TermConnState): void {
    if (this.connState === s) return;
    this.connState = s;
    this.sink.state(s);
  }

  private url(): string {
    const q = new URLSearchParams();
    q.set('cols', String(this.cols));
    q.set('rows', String(this.rows));
    if (this.streamId) {
      q.set('stream', this.streamId);
      q.set('offset', String(this.offset));
    }
    return wsURL(`/api/v1/sessions/${encodeURIComponent(this.sessionId)}/terminal?${q.toString()}`);
  }

  private connect(): void {
    if (this.closed) return;
    clearTimeout(this.retryTimer);
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url());
    } catch {
      this.scheduleRetry();
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.socket = ws;
    this.opened = false;
    ws.onopen = () => {
      if (this.socket !== ws) return;
      this.opened = true;
      this.connects++;
      this.attempts = 0;
      this.setState('open');
      this.armSilence();
      this.pingTimer = setInterval(() => this.sendFrame(T_PING, new Uint8Array(0), false), PING_MS);
      // The URL carried the size; say it again in case it changed meanwhile.
      this.sendResize();
      const q = this.pending;
      this.pending = [];
      this.pendingBytes = 0;
      for (const f of q) ws.send(f);
    };
    ws.onmessage = (m) => {
      if (this.socket !== ws) return;
      this.armSilence();
      if (!(m.data instanceof ArrayBuffer)) return;
      this.frame(new Uint8Array(m.data));
    };
    ws.onclose = (ev) => {
      if (this.socket !== ws) return;
      this.socket = null;
      this.opened = false;
      this.clearTimers();
      if (this.closed || this.connState === 'exited') return;
      // The server could not open the terminal (docs/web-protocol.md): no
      // such session (4404) or one corral cannot attach to (4409) will not
      // change by retrying; anything else (4503 offline) may.
      if (ev.code === 4404 || ev.code === 4409) {
        this.lastExit = ev.reason || 'the terminal is not available';
        this.setState('exited');
        this.sink.exit(this.lastExit);
        return;
      }
      this.setState('reconnecting');
      this.scheduleRetry();
    };
    ws.onerror = () => {
      /* onclose follows */
    };
  }

  private frame(b: Uint8Array): void {
    if (b.length === 0) return;
    switch (b[0]) {
      case T_OUTPUT: {
        if (b.length < 9) return;
        const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
        const off = Number(v.getBigUint64(1));
        let data = b.subarray(9);
        const end = off + data.length;
        if (end <= this.offset) {
          this.duplicateBytes += data.length;
          return; // all seen already
        }
        if (off < this.offset) {
          this.duplicateBytes += this.offset - off;
          data = data.subarray(this.offset - off);
        } else if (off > this.offset) {
          this.gapBytes += off - this.offset;
        }
        this.offset = end;
        this.bytesIn += data.length;
        this.sink.output(data);
        return;
      }
      case T_HELLO: {
        const id = decoder.decode(b.subarray(1));
        if (id !== this.streamId) {
          // A different stream than the one we asked for: a fresh terminal
          // whose offsets are its own (the server also sends reset).
          if (this.streamId) {
            this.offset = 0;
            this.sink.reset();
          }
          this.streamId = id;
        }
        return;
      }
      case T_RESET:
        this.resets++;
        this.offset = 0;
        this.sink.reset();
        return;
      case T_PONG:
        return;
      case T_EXIT: {
        this.lastExit = decoder.decode(b.subarray(1));
        this.clearTimers();
        this.setState('exited');
        this.sink.exit(this.lastExit);
        const ws = this.socket;
        this.socket = null;
        if (ws) ws.close(1000, 'exit');
        return;
      }
    }
  }

  private armSilence(): void {
    clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => this.drop(), SILENCE_MS);
  }

  private scheduleRetry(): void {
    if (this.closed) return;
    clearTimeout(this.retryTimer);
    const base = Math.min(BACKOFF_MAX, BACKOFF_MIN * 2 ** this.attempts);
    this.attempts++;
    this.retryTimer = setTimeout(() => this.connect(), base / 2 + Math.random() * (base / 2));
  }

  private clearTimers(): void {
    clearInterval(this.pingTimer);
    clearTimeout(this.silenceTimer);
    clearTimeout(this.retryTimer);
    this.pingTimer = undefined;
  }
}
