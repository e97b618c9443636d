import { useState } from 'preact/hooks';
import { copyOnSelect, setCopyOnSelect, type TermController } from '../terminal';

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
