// The bell and its drawer, settings, login, help, toasts, connection indicator.

import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api';
import { notifPermission, pushEnabled, pushSupported, requestNotificationPermission, enablePush, disablePush } from '../notify';
import {
  attention,
  auth,
  bellOpen,
  config,
  conn,
  connSince,
  dismissToast,
  helpOpen,
  loadConfig,
  loadNotifications,
  loaded,
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
                    <span class="notif-msg">{n.message || `${n.session_name}: ${n.reason}`}</span>
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
  useEffect(() => {
    void loadConfig().then(() => setHook(config.value.webhook_url ?? ''));
  }, []);
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
        <p class="muted small">
          corral {config.value.version || ''}
          {config.value.hostname ? ` on ${config.value.hostname}` : ''}
        </p>
        <button
          type="button"
          class="btn btn-danger-ghost"
          onClick={() =>
            api
              .logout()
              .catch(() => {})
              .finally(() => location.reload())
          }
        >
          Log out
        </button>
      </section>
    </Modal>
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

export function Login(props: { onLoggedIn: () => void }) {
  const [pw, setPw] = useState('');
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  const showPw = passwordSet.value !== false;
  const submit = (e: Event) => {
    e.preventDefault();
    if (!pw) return;
    setBusy(true);
    setErr('');
    api
      .login(pw)
      .then(() => {
        setPw('');
        auth.value = 'ok';
        props.onLoggedIn();
      })
      .catch((x) => setErr(errorText(x)))
      .finally(() => setBusy(false));
  };
  return (
    <main class="login" data-testid="login">
      <div class="login-box">
        <div class="brand brand-big">
          <img src="/icon.svg" alt="" width={40} height={40} />
          <span>corral</span>
        </div>
        {showPw && (
          <form onSubmit={submit} class="login-form">
            <label class="field">
              <span>Password</span>
              <input
                class="input"
                type="password"
                autoComplete="current-password"
                value={pw}
                autoFocus
                data-testid="password"
                onInput={(e) => setPw((e.target as HTMLInputElement).value)}
              />
            </label>
            {err && (
              <p class="form-error" role="alert">
                {err}
              </p>
            )}
            <button type="submit" class="btn btn-primary" disabled={busy || !pw}>
              {busy ? 'Logging in…' : 'Log in'}
            </button>
          </form>
        )}
        <p class="muted small login-hint">
          {showPw ? 'Or open' : 'Open'} the URL that <code>corral serve</code> printed (it ends in <code>?token=…</code>): it logs this
          browser in.
        </p>
      </div>
    </main>
  );
}
