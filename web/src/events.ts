// The events WebSocket (docs/web-protocol.md): snapshot, session, removed,
// device, device_removed, notification, resync; ?since= on reconnect; a gap or a resync reconnects for a snapshot;
// 45 s of silence (the server pings every 15 s) reconnects.

import { noteProbeError, noteReached } from './reach';
import { batch } from '@preact/signals';
import { api, ApiError, reportUnauthorized, wsURL } from './api';
import { notifyEvent } from './notify';
import {
  addNotification,
  conn,
  connSince,
  lastSeq,
  onSessionEvent,
  removeDevice,
  removeSession,
  setSnapshot,
  updateNotification,
  upsertDevice,
  upsertSession,
} from './store';
import type { CorralEvent, Notification } from './types';
import { parseTime } from './util';

const SILENCE_MS = 45_000;
const BACKOFF_MIN = 500;
const BACKOFF_MAX = 15_000;
/** How long events wait for a frame at most. */
const FLUSH_LATE_MS = 50;

export class EventsClient {
  socket: WebSocket | null = null;
  /** The last seq applied; 0 = none (the next connection asks for a snapshot). */
  seq = 0;
  attempts = 0;
  /** Counters, for tests and the connection indicator. */
  connects = 0;
  gaps = 0;
  private opened = false;
  private stopped = true;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private silenceTimer: ReturnType<typeof setTimeout> | undefined;
  /** Events received, not yet applied (see queue). */
  private pending: CorralEvent[] = [];
  private frame = 0;
  private flushTimer: ReturnType<typeof setTimeout> | undefined;

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
    window.addEventListener('online', this.kick);
    document.addEventListener('visibilitychange', this.kick);
  }

  stop(): void {
    this.stopped = true;
    this.drop();
    clearTimeout(this.retryTimer);
    clearTimeout(this.silenceTimer);
    window.removeEventListener('online', this.kick);
    document.removeEventListener('visibilitychange', this.kick);
    const ws = this.socket;
    this.socket = null;
    if (ws) ws.close(1000);
  }

  /** Forget the position: the next connection asks for a snapshot (another user may log in). */
  forget(): void {
    this.setSeq(0);
  }

  /** Drop the connection and reconnect at once (with ?since= unless fresh). */
  reconnect(fresh = false): void {
    if (fresh) this.setSeq(0);
    const ws = this.socket;
    this.socket = null;
    if (ws) {
      try {
        ws.close(4000, 'reconnect');
      } catch {
        /* already closed */
      }
    }
    clearTimeout(this.retryTimer);
    if (!this.stopped) this.connect();
  }

  private kick = () => {
    if (this.stopped || document.visibilityState !== 'visible') return;
    if (!this.socket || this.socket.readyState > WebSocket.OPEN) {
      clearTimeout(this.retryTimer);
      this.connect();
    }
  };

  private setSeq(n: number): void {
    if (n === 0) this.drop();
    this.seq = n;
    lastSeq.value = n;
  }

  private connect(): void {
    clearTimeout(this.retryTimer);
    const url = wsURL('/api/v1/ws/events' + (this.seq ? `?since=${this.seq}` : ''));
    let ws: WebSocket;
    try {
      ws = new WebSocket(url);
    } catch {
      this.scheduleRetry();
      return;
    }
    this.socket = ws;
    this.opened = false;
    if (conn.value === 'open') {
      conn.value = 'reconnecting';
      connSince.value = Date.now();
    }
    ws.onopen = () => {
      if (this.socket !== ws) return;
      this.opened = true;
      noteReached();
      this.connects++;
      this.attempts = 0;
      this.armSilence();
      batch(() => {
        conn.value = 'open';
        connSince.value = Date.now();
      });
    };
    ws.onmessage = (m) => {
      if (this.socket !== ws) return;
      this.armSilence();
      if (typeof m.data !== 'string') return;
      let ev: CorralEvent;
      try {
        ev = JSON.parse(m.data) as CorralEvent;
      } catch {
        return;
      }
      this.handle(ev);
    };
    ws.onclose = () => {
      if (this.socket !== ws) return;
      this.socket = null;
      clearTimeout(this.silenceTimer);
      if (this.stopped) return;
      if (conn.value === 'open' || conn.value === 'connecting') {
        conn.value = 'reconnecting';
        connSince.value = Date.now();
      }
      if (!this.opened) {
        // The upgrade failed: maybe we are logged out (a WebSocket cannot see the 401).
        this.checkAuth();
      } else {
        this.scheduleRetry();
      }
    };
    ws.onerror = () => {
      /* onclose follows */
    };
  }

  private checkAuth(): void {
    api.me().then(
      () => {
        noteReached();
        this.scheduleRetry();
      },
      (e) => {
        noteProbeError(e);
        if (e instanceof ApiError && e.status === 401) {
          reportUnauthorized(e.body);
          this.stop();
        } else {
          this.scheduleRetry();
        }
      },
    );
  }

  private scheduleRetry(): void {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    const base = Math.min(BACKOFF_MAX, BACKOFF_MIN * 2 ** this.attempts);
    this.attempts++;
    const delay = base / 2 + Math.random() * (base / 2);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  private armSilence(): void {
    clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => {
      // Heard nothing for 45 s: the connection is dead even if the socket does not know.
      this.reconnect();
    }, SILENCE_MS);
  }

  private handle(ev: CorralEvent): void {
    switch (ev.type) {
      case 'ping':
        return;
      case 'resync':
        // We fell behind: start over from a snapshot.
        this.gaps++;
        this.reconnect(true);
        return;
      case 'snapshot':
        // What came before it is older than it: apply that first.
        this.flush();
        setSnapshot(ev.sessions ?? [], ev.devices ?? []);
        if (typeof ev.seq === 'number') this.setSeq(ev.seq);
        return;
    }
    if (typeof ev.seq === 'number') {
      if (this.seq && ev.seq <= this.seq) return; // already applied (replay overlap)
      if (this.seq && ev.seq !== this.seq + 1) {
        // Missed something: reconnect for a snapshot.
        this.gaps++;
        this.reconnect(true);
        return;
      }
      // The position moves now, so that order and gaps are judged on what
      // arrived; lastSeq, which the page shows, moves when it is applied.
      this.seq = ev.seq;
    }
    this.queue(ev);
  }

  /**
   * Events wait for the next frame and are applied together, in order, in
   * one batch: a busy session sends several a second, and each applied
   * alone cost the page a render of its signals' readers (docs/benchmarks.md
   * §14). A hidden page draws no frames: there each is applied at once
   * (its notifications must not wait for a frame that never comes).
   */
  private queue(ev: CorralEvent): void {
    this.pending.push(ev);
    if (document.visibilityState === 'hidden') {
      this.flush(); // with any that came while it was shown, in order
      return;
    }
    if (this.pending.length > 1) return;
    this.frame = requestAnimationFrame(this.flush);
    // A frame can be late (an occluded window): the events are not.
    this.flushTimer = setTimeout(this.flush, FLUSH_LATE_MS);
  }

  /** Applies the waiting events in order, in one batch. */
  private flush = (): void => {
    cancelAnimationFrame(this.frame);
    clearTimeout(this.flushTimer);
    const evs = this.pending;
    if (evs.length === 0) return;
    this.pending = [];
    batch(() => {
      for (const ev of evs) this.apply(ev);
      lastSeq.value = this.seq;
    });
  };

  /** Forgets the waiting events (a new connection starts from a snapshot). */
  private drop(): void {
    cancelAnimationFrame(this.frame);
    clearTimeout(this.flushTimer);
    this.pending = [];
  }

  private apply(ev: CorralEvent): void {
    switch (ev.type) {
      case 'session': {
        const s = ev.session;
        if (!s) return;
        upsertSession(s);
        onSessionEvent(s);
        return;
      }
      case 'removed':
        if (ev.id) removeSession(ev.id);
        return;
      case 'device':
        if (ev.device) upsertDevice(ev.device);
        return;
      case 'device_removed':
        if (ev.id) removeDevice(ev.id);
        return;
      case 'notification':
        if (ev.notification) this.notify(ev, ev.notification);
        return;
    }
  }

  /** A notification, in the words the server logged and pushed (docs/web-protocol.md). */
  private notify(ev: CorralEvent, n: Notification): void {
    // More words for a logged one: its entry changes, no new alert (the push was replaced already).
    if (n.updated) {
      if (n.id) updateNotification(n.id, n.message ?? '');
      return;
    }
    addNotification({
      seq: ev.seq ?? 0,
      id: n.id,
      time: n.time || ev.time || new Date().toISOString(),
      device: n.device,
      session_id: n.session_id,
      session_name: n.session_name,
      reason: n.reason,
      message: n.message ?? '',
      live: true,
    });
    // Replays after a reconnect may carry old news: alert only on fresh ones.
    const t = parseTime(ev.time);
    if (!t || Date.now() - t < 5 * 60_000) notifyEvent(n);
  }
}

export const events = new EventsClient();
