// The keyboard shortcuts.

import { helpOpen } from '../store';
import { Modal } from './Modal';

export const SHORTCUTS: [string, string][] = [
  ['Ctrl+K', 'Go to a session (quick switcher)'],
  ['j / k', 'Next / previous session'],
  ['u', 'Next session that needs you'],
  ['y / n', 'Yes / No to the open session’s dialog'],
  ['1-9', 'Pick that option of the dialog'],
  ['Ctrl+]', 'Leave the terminal'],
  ['g t', 'Terminal'],
  ['g l', 'Timeline'],
  ['g h', 'Home (no session)'],
  ['i', 'Write a prompt (timeline)'],
  ['n', 'New session (No, when a dialog is open)'],
  ['b', 'Attention drawer'],
  ['s', 'Mark the session seen'],
  [',', 'Settings'],
  ['?', 'This help'],
  ['Esc', 'Close a dialog'],
];

export function HelpDialog() {
  return (
    <Modal title="Keyboard shortcuts" onClose={() => (helpOpen.value = false)} testid="help">
      <dl class="shortcuts">
        {SHORTCUTS.map(([k, d]) => (
          <div key={k}>
            <dt>{k.split(' ').map((x, i) => (x === '/' ? <span key={i}> / </span> : <kbd key={i}>{x}</kbd>))}</dt>
            <dd>{d}</dd>
          </div>
        ))}
      </dl>
      <p class="muted small">Shortcuts are off while typing in a field or in the terminal.</p>
    </Modal>
  );
}
