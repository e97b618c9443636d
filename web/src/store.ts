// App state as Preact signals, and the actions on it: one module per subject
// under state/, gathered here. Importing it starts nothing; main.tsx calls
// startState() once.

import { batch } from '@preact/signals';
import { resetAuth } from './state/auth';
import { checkDevice, checkDevices, resetDevices, setDevices } from './state/devices';
import { loadCleared, resetNotifications } from './state/notifications';
import { afterSessionEvent, afterSnapshot, startRouting } from './state/routing';
import { applySnapshot, resetSessions } from './state/sessions';
import { resetUI, startUI } from './state/ui';
import { loadView } from './state/view';
import type { Device, Session } from './types';

export * from './state/auth';
export * from './state/devices';
export * from './state/notifications';
export * from './state/routing';
export * from './state/seen';
export * from './state/sessions';
export * from './state/ui';
export * from './state/view';

/** Start the page-wide listeners and timers: the URL, visibility, layout, clock. */
export function startState(): void {
  startRouting();
  startUI();
  loadCleared();
  loadView();
}

/** Forget everything of the logged-in user (logged out, or the session expired). */
export function resetState(): void {
  batch(() => {
    resetSessions();
    resetDevices();
    resetNotifications();
    resetAuth();
    resetUI();
  });
}

/** The events stream's snapshot: the whole list of sessions, and the machines. */
export function setSnapshot(list: Session[], devs: Device[]): void {
  batch(() => {
    applySnapshot(list);
    setDevices(devs);
  });
  checkDevices(list);
  afterSnapshot();
}

/** After a session event (the session is stored already). */
export function onSessionEvent(s: Session): void {
  checkDevice(s);
  afterSessionEvent(s);
}
