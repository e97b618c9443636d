// Keyboard shortcuts for power users (off while typing).

import {
  bellOpen,
  closeSession,
  helpOpen,
  markViewed,
  moveSelection,
  nextNeedsMe,
  openNewSession,
  selected,
  setTab,
  settingsOpen,
  switcherOpen,
  toast,
} from './store';
import { active } from './terminal';

function typing(t: EventTarget | null): boolean {
  if (!(t instanceof HTMLElement)) return false;
  if (t.isContentEditable) return true;
  const tag = t.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag === 'INPUT') {
    const type = (t as HTMLInputElement).type;
    return !['button', 'checkbox', 'radio', 'submit', 'reset'].includes(type);
  }
  return !!t.closest('.xterm');
}

let gPending = 0;

/**
 * y, n, 1-9 answer the open session's dialog: they press the card's button
 * (the same answer, with its dialog's id; a card that just took the focus
 * ignores it for a moment). false: no such button.
 */
function answerKey(k: string): boolean {
  const s = selected.value;
  if (!s || s.status !== 'needs-input' || s.offline || !s.waiting_for?.dialog_id) return false;
  const card = document.querySelector<HTMLElement>(`[data-testid="needs-input-card"][data-session-id="${CSS.escape(s.id)}"]`);
  if (!card) return false;
  const buttons = [...card.querySelectorAll<HTMLButtonElement>('button[data-option]:not([disabled])')];
  let b: HTMLButtonElement | undefined;
  if (/^[1-9]$/.test(k)) b = buttons.find((x) => x.dataset.option === k);
  else if (k === 'y') b = buttons.find((x) => /^yes\b/i.test(x.getAttribute('aria-label') ?? ''));
  else if (k === 'n') b = buttons.find((x) => /^no\b/i.test(x.getAttribute('aria-label') ?? ''));
  if (!b) return false;
  b.click();
  return true;
}

export function installShortcuts(): void {
  // Ctrl+] leaves the terminal (it takes every other key, Esc included),
  // before xterm.js sees the key.
  window.addEventListener(
    'keydown',
    (e) => {
      if (!(e.ctrlKey && !e.metaKey && !e.altKey && (e.key === ']' || e.code === 'BracketRight'))) return;
      const t = e.target;
      if (!(t instanceof HTMLElement) || !t.closest('.xterm')) return;
      e.preventDefault();
      e.stopPropagation();
      t.blur();
      document.querySelector<HTMLElement>('[data-testid="tab-terminal"]')?.focus();
      toast('Left the terminal: shortcuts work again (g t goes back)', 'info', 2500);
    },
    true,
  );
  window.addEventListener('keydown', (e) => {
    // Ctrl+K (⌘K): the quick switcher, from anywhere but the terminal.
    if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'k') {
      if (e.defaultPrevented || (e.target instanceof HTMLElement && e.target.closest('.xterm'))) return;
      e.preventDefault();
      switcherOpen.value = !switcherOpen.value;
      return;
    }
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    if (typing(e.target)) return;
    if (document.querySelector('dialog[open]')) return;
    const k = e.key;
    if (gPending && Date.now() - gPending < 1200) {
      gPending = 0;
      if (k === 't') {
        setTab('terminal');
        setTimeout(() => active.value?.focus(), 50);
      } else if (k === 'l') setTab('timeline');
      else if (k === 'h') closeSession();
      else return;
      e.preventDefault();
      return;
    }
    gPending = 0;
    switch (k) {
      case 'j':
        moveSelection(1);
        break;
      case 'k':
        moveSelection(-1);
        break;
      case 'g':
        gPending = Date.now();
        break;
      case 'y':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
        if (!answerKey(k)) return;
        break;
      case 'n':
        // No, when the open session asks; else a new session.
        if (!answerKey(k)) openNewSession();
        break;
      case 'u':
        if (!nextNeedsMe()) toast('No other session needs you', 'info', 2000);
        break;
      case 'b':
        bellOpen.value = true;
        break;
      case ',':
        settingsOpen.value = true;
        break;
      case '?':
        helpOpen.value = true;
        break;
      case 's': {
        const s = selected.value;
        if (s && s.status === 'review' && !s.offline) markViewed(s.id);
        break;
      }
      case 'i': {
        if (!selected.value) return;
        setTab('timeline');
        requestAnimationFrame(() => document.querySelector<HTMLTextAreaElement>('textarea[data-testid="prompt-box"]')?.focus());
        break;
      }
      default:
        return;
    }
    e.preventDefault();
  });
}
