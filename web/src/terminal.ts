// One xterm.js terminal attached to one session through a TermConn.

import { signal } from '@preact/signals';
import { FitAddon } from '@xterm/addon-fit';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { Terminal, type ITheme } from '@xterm/xterm';
import { TermConn, type TermConnState } from './termconn';

/** The terminal on screen now (for window.__corral and the keys bar). */
export const active = signal<TermController | null>(null);
/** Ctrl pressed on the keys bar: the next key goes out as its control character. */
export const ctrlArmed = signal(false);

const RESET = Symbol('reset');
type Chunk = Uint8Array | typeof RESET;
/** Coalesce queued output into writes of at most this many bytes. */
const MAX_WRITE = 256 * 1024;

function themeFromCSS(): ITheme {
  const cs = getComputedStyle(document.documentElement);
  const v = (n: string, d: string) => cs.getPropertyValue(n).trim() || d;
  const dark = !window.matchMedia('(prefers-color-scheme: light)').matches;
  return {
    background: v('--term-bg', dark ? '#0f1115' : '#fbfbfc'),
    foreground: v('--term-fg', dark ? '#d7dae0' : '#24292f'),
    cursor: v('--term-cursor', dark ? '#e6e6e6' : '#24292f'),
    cursorAccent: v('--term-bg', dark ? '#0f1115' : '#fbfbfc'),
    selectionBackground: dark ? 'rgba(120,150,255,0.35)' : 'rgba(40,90,220,0.25)',
    ...(dark
      ? {}
      : {
          black: '#24292f',
          red: '#cf222e',
          green: '#116329',
          yellow: '#7d4e00',
          blue: '#0550ae',
          magenta: '#8250df',
          cyan: '#1b7c83',
          white: '#6e7781',
          brightBlack: '#57606a',
          brightRed: '#a40e26',
          brightGreen: '#1a7f37',
          brightYellow: '#633c01',
          brightBlue: '#218bff',
          brightMagenta: '#a475f9',
          brightCyan: '#3192aa',
          brightWhite: '#8c959f',
        }),
  };
}

/** Turn one typed key into its control character (Ctrl+C → \x03). */
export function ctrlOf(data: string): string {
  if (data.length !== 1) {
    // Arrows: ESC [ A → ESC [ 1 ; 5 A
    const m = /^\x1b[[O]([ABCD])$/.exec(data);
    return m ? `\x1b[1;5${m[1]}` : data;
  }
  const c = data.charCodeAt(0);
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x40 && c <= 0x5f)) return String.fromCharCode(c & 0x1f);
  if (data === ' ' || data === '2') return '\x00';
  if (data === '?' || data === '8') return '\x7f';
  if (data >= '3' && data <= '7') return String.fromCharCode(c - 0x33 + 0x1b);
  return data;
}

export class TermController {
  readonly term: Terminal;
  readonly fit = new FitAddon();
  conn: TermConn | null = null;
  readonly state = signal<TermConnState>('connecting');
  readonly exitReason = signal('');
  /** The session's machine is offline: no connection, no input (the last screen stays). */
  readonly offline = signal(false);
  private opened = false;
  private chunks: Chunk[] = [];
  private writing = false;
  private ro: ResizeObserver | null = null;
  private fitQueued = false;
  private disposed = false;
  private mq = window.matchMedia('(prefers-color-scheme: light)');

  constructor(
    readonly sessionId: string,
    private el: HTMLElement,
    fontSize: number,
  ) {
    this.term = new Terminal({
      scrollback: 10000,
      fontFamily: 'ui-monospace, "SFMono-Regular", "JetBrains Mono", "Cascadia Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace',
      fontSize,
      lineHeight: 1.1,
      cursorBlink: true,
      macOptionIsMeta: true,
      theme: themeFromCSS(),
      allowProposedApi: false,
    });
    this.term.loadAddon(this.fit);
    this.term.loadAddon(
      new WebLinksAddon((_e, uri) => {
        window.open(uri, '_blank', 'noopener,noreferrer');
      }),
    );
    this.term.onData((d) => this.send(d));
    this.term.onBinary((d) => {
      if (!this.offline.peek()) this.conn?.inputBinary(d);
    });
    this.term.onResize(({ cols, rows }) => this.conn?.resize(cols, rows));
    this.mq.addEventListener('change', this.onScheme);
  }

  private onScheme = () => {
    this.term.options.theme = themeFromCSS();
  };

  /** Typed input, with the sticky Ctrl of the keys bar applied. */
  send(data: string): void {
    if (this.offline.peek()) return;
    if (ctrlArmed.value && data.length > 0) {
      ctrlArmed.value = false;
      data = ctrlOf(data);
    }
    this.conn?.input(data);
  }

  /** Called when the container is on screen: open, size and connect the first time. */
  shown(): void {
    if (this.disposed) return;
    if (!this.opened) {
      if (this.el.clientWidth === 0 || this.el.clientHeight === 0) return;
      this.opened = true;
      this.term.open(this.el);
      this.safeFit();
      // Fit again once web fonts are in (the cell size changes).
      document.fonts?.ready.then(() => this.queueFit()).catch(() => {});
      this.ro = new ResizeObserver(() => this.queueFit());
      this.ro.observe(this.el);
      if (!this.offline.peek()) this.connect();
    } else {
      this.queueFit();
    }
  }

  /**
   * The machine went away (or came back). Offline: stop connecting (the hub has nothing to
   * attach to) and take no input; the last screen stays. Back: connect again, resuming the
   * stream when the machine still holds it (otherwise the server starts a fresh one).
   */
  setOffline(off: boolean): void {
    if (this.disposed || off === this.offline.peek()) return;
    this.offline.value = off;
    this.term.options.disableStdin = off;
    if (off) {
      ctrlArmed.value = false;
      this.conn?.close();
      return;
    }
    if (!this.opened) return;
    if (this.conn) {
      this.exitReason.value = '';
      this.conn.reconnect(true);
    } else {
      this.connect();
    }
  }

  private connect(): void {
    this.conn = new TermConn(
      this.sessionId,
      {
        output: (d) => this.enqueue(d),
        reset: () => this.enqueue(RESET),
        exit: (r) => (this.exitReason.value = r || 'the terminal closed'),
        state: (s) => {
          this.state.value = s;
          if (s === 'open') this.exitReason.value = '';
        },
      },
      { cols: this.term.cols, rows: this.term.rows },
    );
    this.conn.start();
  }

  focus(): void {
    if (this.opened) this.term.focus();
  }

  private queueFit(): void {
    if (this.fitQueued) return;
    this.fitQueued = true;
    // A timer, not requestAnimationFrame: that one does not run in hidden tabs.
    setTimeout(() => {
      this.fitQueued = false;
      this.safeFit();
    }, 30);
  }

  private safeFit(): void {
    if (this.disposed || !this.opened) return;
    if (this.el.clientWidth === 0 || this.el.clientHeight === 0) return;
    try {
      this.fit.fit();
    } catch {
      /* not rendered yet */
    }
  }

  private enqueue(c: Chunk): void {
    if (c === RESET) this.chunks = [RESET];
    else this.chunks.push(c);
    if (!this.writing) this.pump();
  }

  /** Write queued output one coalesced chunk at a time; xterm parses it without blocking the page. */
  private pump(): void {
    if (this.disposed) return;
    const first = this.chunks[0];
    if (first === undefined) {
      this.writing = false;
      return;
    }
    this.writing = true;
    if (first === RESET) {
      this.chunks.shift();
      this.term.reset();
      queueMicrotask(() => this.pump());
      return;
    }
    let n = 0;
    let total = 0;
    while (n < this.chunks.length) {
      const c = this.chunks[n];
      if (c === RESET || c === undefined) break;
      if (n > 0 && total + c.length > MAX_WRITE) break;
      total += c.length;
      n++;
    }
    let buf: Uint8Array;
    if (n === 1) {
      buf = first;
    } else {
      buf = new Uint8Array(total);
      let o = 0;
      for (let i = 0; i < n; i++) {
        const c = this.chunks[i] as Uint8Array;
        buf.set(c, o);
        o += c.length;
      }
    }
    this.chunks.splice(0, n);
    this.term.write(buf, () => this.pump());
  }

  /** Bytes received but not yet handed to xterm (for tests: wait until 0). */
  get backlog(): number {
    let n = 0;
    for (const c of this.chunks) if (c !== RESET) n += c.length;
    return n + (this.writing ? 1 : 0);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.mq.removeEventListener('change', this.onScheme);
    this.ro?.disconnect();
    this.conn?.close();
    this.chunks = [];
    this.term.dispose();
    if (active.value === this) active.value = null;
  }
}
