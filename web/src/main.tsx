import '@xterm/xterm/css/xterm.css';
import './styles.css';

import { render } from 'preact';
import { api, ApiError, setUnauthorizedHandler } from './api';
import { App } from './components/App';
import { events } from './events';
import { installShortcuts } from './keys';
import { registerSW } from './notify';
import {
  applyHash,
  auth,
  config,
  lastSeq,
  loadConfig,
  loadNotifications,
  loaded,
  notifications,
  openSession,
  passwordSet,
  selectedId,
  sessions,
  setTab,
  tab,
  conn,
  type Tab,
} from './store';
import { active } from './terminal';
import { setHome } from './util';

setUnauthorizedHandler((body) => {
  const b = body as { password_set?: boolean } | undefined;
  if (typeof b?.password_set === 'boolean') passwordSet.value = b.password_set;
  if (auth.value !== 'login') {
    auth.value = 'login';
    events.stop();
  }
});

function start(): void {
  auth.value = 'ok';
  events.start();
  void loadConfig().then(() => setHome(config.value.home));
  void loadNotifications();
  void registerSW();
}

async function boot(): Promise<void> {
  applyHash();
  window.addEventListener('hashchange', applyHash);
  installShortcuts();
  try {
    const me = await api.me();
    if (typeof me?.password_set === 'boolean') passwordSet.value = me.password_set;
    start();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      const b = e.body as { password_set?: boolean } | undefined;
      passwordSet.value = typeof b?.password_set === 'boolean' ? b.password_set : null;
      auth.value = 'login';
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

render(<App onLoggedIn={start} />, document.getElementById('app')!);
void boot();
