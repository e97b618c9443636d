import { useEffect, useRef, useState } from 'preact/hooks';
import { deviceNamed, narrow, now } from '../store';
import { active, ctrlArmed, TermController } from '../terminal';
import type { Session } from '../types';
import { ago } from '../util';
import { CopySheet, TermOverlay } from './TermOverlay';

export function TerminalView(props: { s: Session; visible: boolean }) {
  const el = useRef<HTMLDivElement>(null);
  const [c, setC] = useState<TermController | null>(null);
  const [sheet, setSheet] = useState(false);
  const id = props.s.id;
  const off = !!props.s.offline;

  useEffect(() => {
    const ctl = new TermController(id, el.current!, narrow.peek() ? 12 : 13);
    setC(ctl);
    active.value = ctl;
    return () => {
      ctl.dispose();
      setC(null);
    };
  }, [id]);

  // Before the first shown(): an offline session's terminal opens without connecting.
  useEffect(() => {
    c?.setOffline(off);
  }, [c, off]);

  useEffect(() => {
    if (!c || !props.visible) return;
    // Wait a frame so the container has its size.
    // No focus grab here: j/k must keep working while moving between sessions
    // (click the terminal, or press g t, to type into it).
    const r = setTimeout(() => c.shown(), 0);
    return () => clearTimeout(r);
  }, [props.visible, c]);

  const st = c?.state.value;
  const exit = c?.exitReason.value;
  const dev = deviceNamed(props.s.device);
  const seen = off && dev && !dev.online && dev.last_seen ? ago(dev.last_seen, now.value) : '';
  return (
    <div class="term-wrap" hidden={!props.visible}>
      <div class={`term-box${off ? ' term-offline' : ''}`}>
        <div class="term" ref={el} data-testid="terminal" data-session-id={id} data-offline={off ? 'true' : undefined} />
        {off && (
          <div class="term-exit term-offline-msg" role="status" data-testid="terminal-offline">
            <p>
              <strong>Machine offline</strong>
            </p>
            <p class="muted small">
              {props.s.device ? `${props.s.device} is not connected to the hub` : 'The machine is not connected'}
              {seen ? ` (last seen ${seen})` : ''}. The terminal comes back when it reconnects.
            </p>
          </div>
        )}
        {c && <TermOverlay c={c} disabled={off} />}
        {c && !off && st === 'reconnecting' && !exit && (
          <div class="term-status" role="status">
            Reconnecting…
          </div>
        )}
        {c && !off && exit && (
          <div class="term-exit" role="status">
            <p>Terminal closed: {exit}</p>
            <button type="button" class="btn" onClick={() => c.conn?.reconnect(false)}>
              Reconnect
            </button>
          </div>
        )}
      </div>
      {narrow.value && <KeysBar disabled={off} onCopy={c ? () => setSheet(true) : undefined} />}
      {sheet && c && <CopySheet c={c} onClose={() => setSheet(false)} />}
    </div>
  );
}

interface Key {
  label: string;
  aria: string;
  send: () => string;
}

const arrow = (ch: string) => () => {
  const t = active.value?.term;
  // Application cursor mode (DECCKM) changes what arrows send.
  return t?.modes.applicationCursorKeysMode ? `\x1bO${ch}` : `\x1b[${ch}`;
};

const KEYS: Key[] = [
  { label: '←', aria: 'Left', send: arrow('D') },
  { label: '↑', aria: 'Up', send: arrow('A') },
  { label: '↓', aria: 'Down', send: arrow('B') },
  { label: '→', aria: 'Right', send: arrow('C') },
  { label: '1', aria: '1', send: () => '1' },
  { label: '2', aria: '2', send: () => '2' },
  { label: '3', aria: '3', send: () => '3' },
  { label: '⏎', aria: 'Enter', send: () => '\r' },
];

/** Special keys for phones; they keep the focus (and the soft keyboard) where it is. */
export function KeysBar(props: { disabled?: boolean; onCopy?: () => void }) {
  const keep = (e: Event) => e.preventDefault();
  const dis = !!props.disabled;
  return (
    <div class="keys-bar" data-testid="keys-bar" role="toolbar" aria-label="Special keys" aria-disabled={dis || undefined}>
      <button type="button" class="key" aria-label="Escape" data-key="Escape" disabled={dis} onPointerDown={keep} onMouseDown={keep} onClick={() => active.value?.send('\x1b')}>
        Esc
      </button>
      <button type="button" class="key" aria-label="Tab" data-key="Tab" disabled={dis} onPointerDown={keep} onMouseDown={keep} onClick={() => active.value?.send('\t')}>
        Tab
      </button>
      <button
        type="button"
        class={`key key-ctrl${ctrlArmed.value ? ' armed' : ''}`}
        aria-label="Control (applies to the next key)"
        aria-pressed={ctrlArmed.value}
        data-key="Ctrl"
        disabled={dis}
        onPointerDown={keep}
        onMouseDown={keep}
        onClick={() => (ctrlArmed.value = !ctrlArmed.value)}
      >
        Ctrl
      </button>
      {KEYS.map((k) => (
        <button
          key={k.aria}
          type="button"
          class="key"
          aria-label={k.aria}
          data-key={k.aria}
          disabled={dis}
          onPointerDown={keep}
          onMouseDown={keep}
          onClick={() => active.value?.send(k.send())}
        >
          {k.label}
        </button>
      ))}
      {props.onCopy && (
        <button type="button" class="key" aria-label="Copy text from the terminal" data-key="Copy" onPointerDown={keep} onMouseDown={keep} onClick={props.onCopy}>
          Copy
        </button>
      )}
    </div>
  );
}
