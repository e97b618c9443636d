import '@xterm/xterm/css/xterm.css';
import './styles.css';

import { render } from 'preact';
import { api, ApiError } from './api';
import { installAuthHandler, start, toLogin } from './auth';
import { App } from './components/App';
import { startTypingTracker } from './components/NeedsInput';
import { events } from './events';
import { installShortcuts } from './keys';
import {
  auth,
  currentUser,
  devices,
  lastSeq,
  loaded,
  multiUser,
  notifications,
  openSession,
  selectedId,
  sessions,
  setTab,
  startState,
  tab,
  conn,
  type Tab,
} from './store';
import type { AuthMe } from './types';
import { active } from './terminal';

async function boot(): Promise<void> {
  installAuthHandler();
  startState();
  startTypingTracker();
  installShortcuts();
  try {
    start(await api.me());
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      toLogin(e.body as AuthMe | undefined);
    } else {
      // Server unreachable: show the app; the events socket keeps retrying.
      start();
    }
  }
}

// Hooks for automated tests.
const hooks = {
  get term() {
    return active.value?.term ?? null;
  },
  get terminal() {
    return active.value;
  },
  get state() {
    return {
      auth: auth.value,
      user: currentUser.value,
      multiUser: multiUser.value,
      devices: devices.value,
      connection: conn.value,
      loaded: loaded.value,
      lastSeq: lastSeq.value,
      selectedId: selectedId.value,
      tab: tab.value,
      sessions: sessions.value,
      notifications: notifications.value,
      terminal: active.value
        ? {
            sessionId: active.value.sessionId,
            state: active.value.state.value,
            offline: active.value.offline.value,
            stream: active.value.conn?.streamId ?? '',
            offset: active.value.conn?.offset ?? 0,
            exit: active.value.exitReason.value,
            backlog: active.value.backlog,
          }
        : null,
    };
  },
  ws: {
    get events() {
      return events;
    },
    get terminal() {
      return active.value?.conn ?? null;
    },
  },
  open: (id: string, t?: Tab) => openSession(id, t),
  setTab: (t: Tab) => setTab(t),
};
Object.defineProperty(window, '__corral', { value: hooks, configurable: true });

render(<App />, document.getElementById('app')!);
void boot();
