// Page-level UI state: the layout, the open panels, the toasts and the clock.

import { batch, signal } from '@preact/signals';
import { errorText } from '../api';
import { isNarrow } from '../util';
import { conn, sessions } from './sessions';

/** Phone layout (< 768 px). */
export const narrow = signal(isNarrow());

// Panels.
export const sidebarOpen = signal(false); // the drawer on phones
export const bellOpen = signal(false);
export const settingsOpen = signal(false);
export const newSessionOpen = signal(false);
/** The machine the new-session dialog starts on (a group's + button); '' = ask. */
export const newSessionDevice = signal('');
export const helpOpen = signal(false);
/** The quick switcher (Ctrl+K). */
export const switcherOpen = signal(false);
/** A file whose diff the session's Git panel is to open at (a turn's file clicked in the timeline). */
export const gitFocus = signal<{ session: string; path: string } | null>(null);

export function openGitFile(session: string, path: string): void {
  gitFocus.value = { session, path };
}

export function openNewSession(device = ''): void {
  newSessionDevice.value = device;
  newSessionOpen.value = true;
}

/** Ticks every second while anything shows a running clock. */
export const now = signal(Date.now());

export interface Toast {
  id: number;
  text: string;
  kind: 'error' | 'info';
}
export const toasts = signal<Toast[]>([]);
let toastSeq = 0;
export function toast(text: string, kind: Toast['kind'] = 'error', ms = 5000): void {
  const id = ++toastSeq;
  toasts.value = [...toasts.value, { id, text, kind }].slice(-4);
  setTimeout(() => dismissToast(id), ms);
}
export function dismissToast(id: number): void {
  toasts.value = toasts.value.filter((t) => t.id !== id);
}
export function toastError(prefix: string) {
  return (e: unknown) => toast(`${prefix}: ${errorText(e)}`);
}

/** Follow the layout breakpoint and run the clock (called once, from main.tsx). */
export function startUI(): void {
  window.matchMedia('(max-width: 767.98px)').addEventListener('change', (e) => {
    narrow.value = e.matches;
    if (!e.matches) sidebarOpen.value = false;
  });
  setInterval(() => {
    if (sessions.value.some((s) => s.status === 'busy' && s.busy_since) || conn.value !== 'open') {
      now.value = Date.now();
    }
  }, 1000);
}

export function resetUI(): void {
  batch(() => {
    sidebarOpen.value = false;
    bellOpen.value = false;
    settingsOpen.value = false;
    newSessionOpen.value = false;
    helpOpen.value = false;
    switcherOpen.value = false;
    gitFocus.value = null;
  });
}
