import { useMemo, useState } from 'preact/hooks';
import { copyOnSelect, copyText, setCopyOnSelect, type TermController } from '../terminal';
import { Modal } from './Modal';

/**
 * What floats over the terminal: "Fit to this screen" while another viewer sizes the window,
 * "Jump to live" while scrolled up, and Copy while text is selected (phones have no Ctrl+Shift+C).
 */
export function TermOverlay(props: { c: TermController; disabled?: boolean }) {
  const c = props.c;
  const [copied, setCopied] = useState<'' | 'ok' | 'fail'>('');
  const w = c.window.value;
  const following = !c.driving.value && !!w;
  const copy = async () => {
    const ok = await c.copySelection();
    setCopied(ok ? 'ok' : 'fail');
    setTimeout(() => setCopied(''), 1500);
  };
  const keep = (e: Event) => e.preventDefault();
  return (
    <>
      {following && !props.disabled && (
        <div class="term-follow" role="status" data-testid="term-following" data-cols={w.cols} data-rows={w.rows}>
          <span>
            Sized by another screen ({w.cols}×{w.rows})
          </span>
          <button type="button" class="btn btn-small" data-testid="term-fit" onMouseDown={keep} onClick={() => c.takeWindow()}>
            Fit to this screen
          </button>
        </div>
      )}
      {c.selection.value && (
        <div class="term-copy" data-testid="term-copy-bar">
          <button type="button" class="btn btn-small" data-testid="term-copy" onMouseDown={keep} onClick={copy}>
            {copied === 'ok' ? 'Copied' : copied === 'fail' ? 'Copy failed' : 'Copy'}
          </button>
          <label class="term-copy-opt">
            <input
              type="checkbox"
              data-testid="copy-on-select"
              checked={copyOnSelect.value}
              onChange={(e) => setCopyOnSelect((e.target as HTMLInputElement).checked)}
            />{' '}
            Copy on select
          </label>
        </div>
      )}
      {c.scrolledUp.value && (
        <button type="button" class="term-live" data-testid="jump-to-live" onMouseDown={keep} onClick={() => c.scrollToLive()}>
          Jump to live ↓
        </button>
      )}
    </>
  );
}

/** How many of the terminal's last lines the copy sheet holds. */
const SHEET_LINES = 300;

/**
 * The phone's way to copy from the terminal (xterm.js has no touch selection): the last lines as
 * plain text in a sheet, where the phone's own selection works, and "Copy all".
 */
export function CopySheet(props: { c: TermController; onClose: () => void }) {
  const [done, setDone] = useState('');
  const text = useMemo(() => {
    const b = props.c.term.buffer.active;
    const out: string[] = [];
    for (let i = Math.max(0, b.length - SHEET_LINES); i < b.length; i++) out.push(b.getLine(i)?.translateToString(true) ?? '');
    while (out.length && !out[out.length - 1]!.trim()) out.pop();
    return out.join('\n');
  }, [props.c]);
  return (
    <Modal title="Copy from the terminal" onClose={props.onClose} testid="copy-sheet">
      <p class="muted small">Select what you need below, or copy it all.</p>
      <textarea class="copy-sheet-text" readOnly value={text} data-testid="copy-sheet-text" rows={14} />
      <div class="copy-sheet-actions">
        <button
          type="button"
          class="btn btn-primary"
          data-testid="copy-sheet-all"
          onClick={async () => setDone((await copyText(text)) ? 'Copied' : 'Copy failed')}
        >
          {done || 'Copy all'}
        </button>
        <button type="button" class="btn" onClick={props.onClose}>
          Close
        </button>
      </div>
    </Modal>
  );
}
