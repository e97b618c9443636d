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
/** The OSC the server reports the window's size with (docs/web-protocol.md). */
const SIZE_OSC = 6973;
/** After this viewer sized the window, reports of another size wait this long (they may predate it). */
const CLAIM_GRACE = 1200;
/** The smallest font a viewer shrinks to while it follows a larger window. */
const MIN_FONT = 4;
const COPY_ON_SELECT = 'corral.copyOnSelect';

/** Copy-on-select, remembered in this browser. */
export const copyOnSelect = signal(readCopyOnSelect());

function readCopyOnSelect(): boolean {
  try {
    return localStorage.getItem(COPY_ON_SELECT) === '1';
  } catch {
    return false;
  }
}

export function setCopyOnSelect(on: boolean): void {
  copyOnSelect.value = on;
  try {
    localStorage.setItem(COPY_ON_SELECT, on ? '1' : '0');
  } catch {
    /* private mode */
  }
}

/** Put text on the clipboard: the async API, or a hidden textarea where it is missing. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall back */
  }
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.setAttribute('readonly', '');
  ta.style.position = 'fixed';
  ta.style.opacity = '0';
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  ta.remove();
  return ok;
}

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
  /**
   * Whether this viewer sizes the window. tmux gives the window the size of the client that
   * attached, typed or resized last; the others follow it: they draw at the window's size,
   * with a smaller font when it is larger than their screen (docs/web-protocol.md).
   */
  readonly driving = signal(true);
  /** The window's size as the server last reported it. */
  readonly window = signal<{ cols: number; rows: number } | null>(null);
  /** The viewport is scrolled up from the live screen. */
  readonly scrolledUp = signal(false);
  /** Text is selected in the terminal. */
  readonly selection = signal(false);
  /** Until then, a report of another size may predate this viewer's own resize. */
  private claimedAt = 0;
  private claimTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    readonly sessionId: string,
    private el: HTMLElement,
    private baseFont: number,
  ) {
    const fontSize = baseFont;
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
    this.term.parser.registerOscHandler(SIZE_OSC, (data) => {
      const m = /^(\d{1,4});(\d{1,4})$/.exec(data);
      if (m) this.onWindowSize(Number(m[1]), Number(m[2]));
      return true;
    });
    const scrolled = () => {
      const b = this.term.buffer.active;
      const up = b.viewportY < b.baseY;
      if (up !== this.scrolledUp.peek()) this.scrolledUp.value = up;
    };
    this.term.onScroll(scrolled);
    this.term.onWriteParsed(scrolled);
    this.term.onSelectionChange(() => {
      const has = this.term.hasSelection();
      this.selection.value = has;
      if (has && copyOnSelect.peek()) void copyText(this.term.getSelection());
    });
    // Ctrl+Shift+C copies (Ctrl+C stays the interrupt); Ctrl+Shift+V is the browser's paste.
    this.term.attachCustomKeyEventHandler((e) => {
      if (e.ctrlKey && e.shiftKey && !e.altKey && !e.metaKey && e.code === 'KeyC') {
        e.preventDefault();
        if (e.type === 'keydown') void this.copySelection();
        return false;
      }
      return true;
    });
    this.mq.addEventListener('change', this.onScheme);
  }

  /** Copy the selection; false when there is none or the browser refused. */
  async copySelection(): Promise<boolean> {
    const t = this.term.getSelection();
    if (!t) return false;
    return copyText(t);
  }

  scrollToLive(): void {
    this.term.scrollToBottom();
    this.scrolledUp.value = false;
  }

  /** The cols x rows this viewer's screen holds at its own font. */
  private ownSize(): { cols: number; rows: number } | null {
    const cur = this.term.options.fontSize ?? this.baseFont;
    const d = this.fit.proposeDimensions();
    if (!d || !Number.isFinite(d.cols) || !Number.isFinite(d.rows)) return null;
    if (cur === this.baseFont) return { cols: d.cols, rows: d.rows };
    // Measured at the current font: scale to the base one.
    const k = cur / this.baseFont;
    return { cols: Math.max(2, Math.floor(d.cols * k)), rows: Math.max(1, Math.floor(d.rows * k)) };
  }

  /** The server says the window is cols x rows. */
  private onWindowSize(cols: number, rows: number): void {
    if (cols < 2 || rows < 1 || cols > 1000 || rows > 500) return;
    this.window.value = { cols, rows };
    if (cols === this.term.cols && rows === this.term.rows) return;
    if (this.driving.peek() && Date.now() - this.claimedAt < CLAIM_GRACE) {
      // Perhaps from before our own resize reached tmux: look again when the grace ends.
      if (!this.claimTimer) {
        this.claimTimer = setTimeout(() => {
          this.claimTimer = null;
          const w = this.window.peek();
          if (w) this.onWindowSize(w.cols, w.rows);
        }, CLAIM_GRACE);
      }
      return;
    }
    this.driving.value = false;
    this.follow();
  }

  /** Draw at the window's size, shrinking the font until it fits this screen. */
  private follow(): void {
    const w = this.window.peek();
    if (!w || this.disposed || !this.opened) return;
    const own = this.ownSize();
    let font = this.baseFont;
    if (own && (w.cols > own.cols || w.rows > own.rows)) {
      const k = Math.min(own.cols / w.cols, own.rows / w.rows);
      font = Math.max(MIN_FONT, Math.floor(this.baseFont * k * 10) / 10);
    }
    if (this.term.options.fontSize !== font) this.term.options.fontSize = font;
    if (this.term.cols !== w.cols || this.term.rows !== w.rows) this.term.resize(w.cols, w.rows);
    // Still larger at the smallest font: the container scrolls sideways (styles.css).
    this.el.classList.add('term-following');
  }

  /** Size the window for this screen (typing does it too). */
  takeWindow(): void {
    if (this.disposed || !this.opened) return;
    this.claimedAt = Date.now();
    this.driving.value = true;
    this.el.classList.remove('term-following');
    if (this.term.options.fontSize !== this.baseFont) this.term.options.fontSize = this.baseFont;
    this.safeFit();
    this.conn?.resize(this.term.cols, this.term.rows, true);
  }

  private onScheme = () => {
    this.term.options.theme = themeFromCSS();
  };

  /** Typed input, with the sticky Ctrl of the keys bar applied. */
  send(data: string): void {
    if (this.offline.peek()) return;
    // The window follows whoever types: size it for this screen first.
    if (!this.driving.peek()) this.takeWindow();
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
      this.claimedAt = Date.now();
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
      if (!this.driving.peek()) {
        this.follow();
        return;
      }
      const d = this.fit.proposeDimensions();
      if (d && (d.cols !== this.term.cols || d.rows !== this.term.rows)) this.claimedAt = Date.now();
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
    if (this.claimTimer) clearTimeout(this.claimTimer);
    this.mq.removeEventListener('change', this.onScheme);
    this.ro?.disconnect();
    this.conn?.close();
    this.chunks = [];
    this.term.dispose();
    if (active.value === this) active.value = null;
  }
}
