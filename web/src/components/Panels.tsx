// The bell and its drawer, settings, login, help, toasts, connection indicator.

import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, errorText } from '../api';
import { loggedIn, logout } from '../auth';
import { notifPermission, pushEnabled, pushSupported, requestNotificationPermission, enablePush, disablePush } from '../notify';
import {
  attention,
  bellOpen,
  config,
  conn,
  connSince,
  dismissToast,
  helpOpen,
  loadConfig,
  loadNotifications,
  currentUser,
  loaded,
  multiUser,
  notifications,
  now,
  openSession,
  passwordSet,
  sessionsById,
  settingsOpen,
  toast,
  toasts,
  unseenNotifications,
} from '../store';
import type { WebSession } from '../types';
import { activity, ago, timeOfDay } from '../util';
import { Icon } from './Icon';
import { Modal } from './Modal';
import { SessionDot, StatusDot } from './StatusDot';

export function Bell() {
  const n = attention.value.length;
  const unseen = unseenNotifications.value;
  return (
    <button
      type="button"
      class={`icon-btn bell${n > 0 ? ' has-count' : ''}`}
      data-testid="bell"
      aria-label={`Attention: ${n} session${n === 1 ? '' : 's'}${unseen ? `, ${unseen} new notification${unseen === 1 ? '' : 's'}` : ''}`}
      aria-haspopup="dialog"
      title="Sessions that need you (b)"
      onClick={() => (bellOpen.value = true)}
    >
      <Icon name="bell" size={18} />
      {n > 0 && (
        <span class="bell-count" data-testid="bell-count">
          {n}
        </span>
      )}
      {n === 0 && unseen > 0 && <span class="bell-unseen" aria-hidden="true" />}
    </button>
  );
}

export function BellDrawer() {
  useEffect(() => {
    unseenNotifications.value = 0;
    void loadNotifications();
  }, []);
  const close = () => (bellOpen.value = false);
  const open = (id: string) => {
    close();
    openSession(id);
  };
  const att = attention.value;
  const list = notifications.value;
  return (
    <Modal title="Attention" onClose={close} variant="sheet" testid="bell-drawer">
      <section class="att-section">
        <h3>Waiting for you</h3>
        {att.length === 0 && <p class="muted">Nothing needs you right now.</p>}
        <ul class="att-list">
          {att.map((s) => (
            <li key={s.id}>
              <button type="button" class="att-item" onClick={() => open(s.id)} data-testid="attention-item" data-session-id={s.id}>
                <SessionDot s={s} />
                <span class="att-main">
                  <span class="att-name">
                    {s.name}
                    {s.device && <span class="muted"> · {s.device}</span>}
                    {s.offline && (
                      <span class="tag tag-offline" data-testid="offline-badge">
                        offline
                      </span>
                    )}
                  </span>
                  <span class="att-act">{s.status === 'review' ? (s.error ? `Failed: ${s.error}` : 'Finished, not seen yet') : activity(s)}</span>
                </span>
              </button>
            </li>
          ))}
        </ul>
      </section>
      <section class="att-section">
        <h3>Recent notifications</h3>
        {list.length === 0 && <p class="muted">No notifications yet.</p>}
        <ul class="notif-list">
          {list.map((n) => {
            const s = sessionsById.value[n.session_id];
            return (
              <li key={`${n.seq}-${n.session_id}-${n.time}`}>
                <button type="button" class="notif" disabled={!s} onClick={() => s && open(n.session_id)} data-testid="notification">
                  <StatusDot status={n.reason === 'needs-input' ? 'needs-input' : n.reason === 'review' ? 'review' : 'idle'} title={n.reason} />
                  <span class="notif-main">
                    <span class="notif-msg">
                      {n.device && <span class="notif-dev">{n.device}/</span>}
                      {n.message || `${n.session_name}: ${n.reason}`}
                    </span>
                    <span class="notif-time" title={new Date(n.time).toLocaleString()}>
                      {timeOfDay(n.time)} · {ago(n.time)}
                      {!s && ' · session gone'}
                    </span>
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
      </section>
    </Modal>
  );
}

export function ConnIndicator() {
  const c = conn.value;
  if (c === 'open') return null;
  if (c === 'connecting' && !loaded.value && now.value - connSince.value < 1500) return null;
  const secs = Math.max(0, Math.round((now.value - connSince.value) / 1000));
  return (
    <span class={`conn conn-${c}`} role="status" data-testid="conn-status" data-state={c} title="The live connection to corral is down; retrying">
      <span class="spinner" aria-hidden="true" />
      {c === 'connecting' ? 'Connecting…' : 'Reconnecting…'}
      {secs >= 3 && <span class="muted"> {secs}s</span>}
    </span>
  );
}

export function SettingsPanel() {
  const close = () => (settingsOpen.value = false);
  const [hook, setHook] = useState(config.value.webhook_url ?? '');
  const [saving, setSaving] = useState(false);
  const [pushBusy, setPushBusy] = useState(false);
  const [pushErr, setPushErr] = useState('');
  const [loggingOut, setLoggingOut] = useState(false);
  useEffect(() => {
    void loadConfig().then(() => setHook(config.value.webhook_url ?? ''));
  }, []);
  const doLogout = () => {
    setLoggingOut(true);
    void logout();
  };
  const perm = notifPermission.value;
  const saveHook = (e: Event) => {
    e.preventDefault();
    setSaving(true);
    api
      .settings({ webhook_url: hook.trim() })
      .then(() => {
        config.value = { ...config.value, webhook_url: hook.trim() };
        toast(hook.trim() ? 'Webhook saved' : 'Webhook cleared', 'info', 2500);
      })
      .catch((err) => toast(`Saving the webhook failed: ${errorText(err)}`))
      .finally(() => setSaving(false));
  };
  const push = (on: boolean) => {
    setPushBusy(true);
    setPushErr('');
    (on ? enablePush() : disablePush())
      .then(() => toast(on ? 'Push notifications on' : 'Push notifications off', 'info', 2500))
      .catch((err) => setPushErr(errorText(err)))
      .finally(() => setPushBusy(false));
  };
  return (
    <Modal title="Settings" onClose={close} variant="sheet" testid="settings">
      <section class="set-section">
        <h3>Desktop notifications</h3>
        <p class="muted small">While this page is open, a notification when a session needs you or finishes.</p>
        {perm === 'unsupported' && <p class="muted">This browser has no notifications.</p>}
        {perm === 'granted' && <p class="ok-text">Allowed.</p>}
        {perm === 'denied' && <p class="warn-text">Blocked in the browser's site settings.</p>}
        {perm === 'default' && (
          <button type="button" class="btn" onClick={() => void requestNotificationPermission()} data-testid="enable-desktop-notifications">
            Allow desktop notifications
          </button>
        )}
      </section>
      <section class="set-section">
        <h3>Push notifications</h3>
        <p class="muted small">Alerts on this device even when the page is closed (install the app on a phone for the best result).</p>
        {!pushSupported && <p class="muted">This browser has no Web Push{location.protocol !== 'https:' && location.hostname !== 'localhost' && location.hostname !== '127.0.0.1' ? ' (it needs HTTPS)' : ''}.</p>}
        {pushSupported && (
          <div class="btn-row">
            {pushEnabled.value ? (
              <>
                <span class="ok-text">On for this browser.</span>
                <button type="button" class="btn" disabled={pushBusy} onClick={() => push(false)} data-testid="disable-push">
                  Disable
                </button>
              </>
            ) : (
              <button type="button" class="btn btn-primary" disabled={pushBusy} onClick={() => push(true)} data-testid="enable-push">
                {pushBusy ? 'Enabling…' : 'Enable push notifications'}
              </button>
            )}
          </div>
        )}
        {pushErr && (
          <p class="form-error" role="alert">
            {pushErr}
          </p>
        )}
      </section>
      <section class="set-section">
        <h3>Webhook</h3>
        <p class="muted small">corral POSTs each notification to this URL (ntfy, Slack-style). Empty: off.</p>
        <form class="btn-row" onSubmit={saveHook}>
          <input
            class="input"
            type="url"
            inputMode="url"
            placeholder="https://ntfy.sh/my-topic"
            value={hook}
            aria-label="Webhook URL"
            data-testid="webhook-url"
            onInput={(e) => setHook((e.target as HTMLInputElement).value)}
          />
          <button type="submit" class="btn" disabled={saving}>
            Save
          </button>
        </form>
      </section>
      <section class="set-section">
        <h3>Keyboard</h3>
        <button type="button" class="btn" onClick={() => ((settingsOpen.value = false), (helpOpen.value = true))}>
          Show shortcuts (?)
        </button>
      </section>
      <section class="set-section">
        <h3>About</h3>
        <p class="muted small" data-testid="about-version">
          corral {config.value.version || ''}
          {config.value.hostname ? ` on ${config.value.hostname}` : ''}
        </p>
        {(config.value.commit || config.value.build_date) && (
          <p class="muted small" data-testid="about-build">
            {[
              config.value.commit ? `commit ${config.value.commit.slice(0, 12)}` : '',
              config.value.build_date ? `built ${config.value.build_date.slice(0, 10)}` : '',
            ]
              .filter(Boolean)
              .join(', ')}
          </p>
        )}
      </section>
      <section class="set-section set-account">
        <h3>Account</h3>
        <div class="btn-row">
          <span class="small account-user" data-testid="current-user">
            {multiUser.value && currentUser.value ? (
              <>
                Logged in as <strong>{currentUser.value}</strong>
              </>
            ) : (
              'Logged in'
            )}
          </span>
          <button type="button" class="btn btn-danger-ghost" disabled={loggingOut} onClick={doLogout} data-testid="logout">
            {loggingOut ? 'Logging out…' : 'Log out'}
          </button>
        </div>
        {pushEnabled.value && <p class="muted small">Logging out also stops push notifications in this browser.</p>}
      </section>
      <SignedInDevices />
    </Modal>
  );
}

/** A short name for a browser, from its user agent: "Firefox on Linux". */
function browserName(ua?: string): string {
  if (!ua) return 'Unknown browser';
  const b = /Edg\//.test(ua)
    ? 'Edge'
    : /Firefox\//.test(ua)
      ? 'Firefox'
      : /Chrome\//.test(ua)
        ? 'Chrome'
        : /Safari\//.test(ua)
          ? 'Safari'
          : '';
  const os = /iPhone|iPad/.test(ua)
    ? 'iOS'
    : /Android/.test(ua)
      ? 'Android'
      : /Mac OS X/.test(ua)
        ? 'macOS'
        : /Windows/.test(ua)
          ? 'Windows'
          : /Linux|X11/.test(ua)
            ? 'Linux'
            : '';
  if (b || os) return [b || 'A browser', os].filter(Boolean).join(' on ');
  return ua.length > 40 ? ua.slice(0, 39) + '…' : ua;
}

/** The browsers logged in to this account, each with "Sign out" (docs/web-protocol.md). */
function SignedInDevices() {
  const [list, setList] = useState<WebSession[] | null>(null);
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState('');
  const load = () =>
    api.webSessions().then(
      (l) => {
        setList(l ?? []);
        setErr('');
      },
      (e) => setErr(errorText(e)),
    );
  useEffect(() => {
    void load();
  }, []);
  const signOut = (id: string) => {
    setBusy(id);
    api
      .endWebSession(id)
      .then(
        () => {
          toast('Signed out', 'info', 2500);
          return load();
        },
        (e) => toast(`Signing out failed: ${errorText(e)}`),
      )
      .finally(() => setBusy(''));
  };
  return (
    <section class="set-section" data-testid="signed-in-devices">
      <h3>Signed-in devices</h3>
      <p class="muted small">Browsers logged in to this account. Signing one out ends its session at once.</p>
      {err && (
        <p class="form-error" role="alert">
          {err}
        </p>
      )}
      {list === null && !err && <p class="muted small">Loading…</p>}
      {list && list.length > 0 && (
        <ul class="web-sessions">
          {list.map((ws) => (
            <li key={ws.id} class="web-session" data-testid="web-session" data-session-id={ws.id} data-current={ws.current ? 'true' : 'false'}>
              <div class="web-session-main">
                <span class="web-session-name" title={ws.user_agent}>
                  {browserName(ws.user_agent)}
                  {ws.current && <span class="muted"> · this browser</span>}
                </span>
                <span class="web-session-meta">
                  {[ws.address, `last seen ${ago(ws.last_seen, now.value)}`, `since ${new Date(ws.created_at).toLocaleDateString()}`]
                    .filter(Boolean)
                    .join(' · ')}
                </span>
              </div>
              {!ws.current && (
                <button type="button" class="btn" disabled={busy === ws.id} onClick={() => signOut(ws.id)} data-testid="sign-out-device">
                  {busy === ws.id ? 'Signing out…' : 'Sign out'}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export const SHORTCUTS: [string, string][] = [
  ['j / k', 'Next / previous session'],
  ['g t', 'Terminal'],
  ['g l', 'Timeline'],
  ['g h', 'Home (no session)'],
  ['i', 'Write a prompt (timeline)'],
  ['n', 'New session'],
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
            <dt>
              {k.split(' ').map((x, i) => (x === '/' ? <span key={i}> / </span> : <kbd key={i}>{x}</kbd>))}
            </dt>
            <dd>{d}</dd>
          </div>
        ))}
      </dl>
      <p class="muted small">Shortcuts are off while typing in a field or in the terminal.</p>
    </Modal>
  );
}

export function Toasts() {
  return (
    <div class="toasts" aria-live="assertive">
      {toasts.value.map((t) => (
        <div key={t.id} class={`toast toast-${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
          <span>{t.text}</span>
          <button type="button" class="icon-btn" aria-label="Dismiss" onClick={() => dismissToast(t.id)}>
            <Icon name="x" size={14} />
          </button>
        </div>
      ))}
    </div>
  );
}

type LoginMode = 'password' | 'token';

export function Login() {
  const multi = multiUser.value;
  // A password login is possible on a hub (its users have passwords) or once `corral passwd` set one.
  const pwPossible = multi || passwordSet.value !== false;
  const [mode, setMode] = useState<LoginMode>(pwPossible ? 'password' : 'token');
  const [user, setUser] = useState('');
  const [pw, setPw] = useState('');
  const [token, setToken] = useState('');
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  const m: LoginMode = pwPossible ? mode : 'token';
  const ready = m === 'token' ? !!token.trim() : !!pw && (!multi || !!user.trim());
  const submit = (e: Event) => {
    e.preventDefault();
    if (!ready || busy) return;
    setBusy(true);
    setErr('');
    const body = m === 'token' ? { token: token.trim() } : multi ? { user: user.trim(), password: pw } : { password: pw };
    api
      .login(body)
      .then(() => {
        setPw('');
        setToken('');
        return loggedIn();
      })
      .catch((x) => {
        setErr(m === 'token' && x instanceof ApiError && x.status === 401 ? 'That token is not valid.' : errorText(x));
        setBusy(false);
      });
  };
  const switchTo = (next: LoginMode) => {
    setMode(next);
    setErr('');
  };
  return (
    <main class="login" data-testid="login" data-multi-user={multi ? 'true' : 'false'}>
      <div class="login-box">
        <div class="brand brand-big">
          <img src="/icon.svg" alt="" width={40} height={40} />
          <span>corral</span>
        </div>
        <form onSubmit={submit} class="login-form" data-mode={m}>
          {m === 'password' ? (
            <>
              {multi && (
                <label class="field">
                  <span>User name</span>
                  <input
                    class="input"
                    type="text"
                    name="username"
                    autoComplete="username"
                    autoCapitalize="none"
                    autoCorrect="off"
                    spellcheck={false}
                    value={user}
                    autoFocus
                    data-testid="login-user"
                    onInput={(e) => setUser((e.target as HTMLInputElement).value)}
                  />
                </label>
              )}
              <label class="field">
                <span>Password</span>
                <input
                  class="input"
                  type="password"
                  name="password"
                  autoComplete="current-password"
                  value={pw}
                  autoFocus={!multi}
                  data-testid="password"
                  onInput={(e) => setPw((e.target as HTMLInputElement).value)}
                />
              </label>
            </>
          ) : (
            <label class="field">
              <span>API token</span>
              <input
                class="input input-mono"
                type="password"
                name="token"
                autoComplete="off"
                spellcheck={false}
                value={token}
                autoFocus
                data-testid="login-token"
                onInput={(e) => setToken((e.target as HTMLInputElement).value)}
              />
            </label>
          )}
          {err && (
            <p class="form-error" role="alert" data-testid="login-error">
              {err}
            </p>
          )}
          <button type="submit" class="btn btn-primary" disabled={busy || !ready} data-testid="login-submit">
            {busy ? 'Logging in…' : 'Log in'}
          </button>
        </form>
        {pwPossible && (
          <button
            type="button"
            class="link-btn login-switch"
            data-testid={m === 'password' ? 'login-with-token' : 'login-with-password'}
            onClick={() => switchTo(m === 'password' ? 'token' : 'password')}
          >
            {m === 'password' ? 'Log in with a token' : multi ? 'Log in with a user name and password' : 'Log in with the password'}
          </button>
        )}
        <p class="muted small login-hint">
          {multi ? (
            <>
              An API token comes from <code>corral hub user add</code> or <code>corral hub user token NAME</code> on the hub.
            </>
          ) : (
            <>
              {m === 'token' ? 'Paste an API token (' : 'Or open a login link: '}
              {m === 'token' ? (
                <>
                  <code>corral token rotate</code>) or the token of a login link, or open the link: it logs this browser in.
                </>
              ) : (
                <>
                  <code>corral serve</code> prints one at start, <code>corral login-link</code> makes another. A link works once, for 10
                  minutes.
                </>
              )}
            </>
          )}
        </p>
      </div>
    </main>
  );
}
