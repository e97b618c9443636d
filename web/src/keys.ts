// Keyboard shortcuts for power users (off while typing).

import { bellOpen, closeSession, helpOpen, markViewed, moveSelection, openNewSession, selected, setTab, settingsOpen } from './store';
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

export function installShortcuts(): void {
  window.addEventListener('keydown', (e) => {
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
      case 'n':
        openNewSession();
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
