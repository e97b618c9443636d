// Settings: notifications, push, the webhook, the account and the signed-in browsers.

import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api';
import { logout } from '../auth';
import {
  disablePush,
  enablePush,
  notifPermission,
  pushEnabled,
  pushSupported,
  requestNotificationPermission,
  sendTestNotification,
} from '../notify';
import { config, helpOpen, loadConfig, currentUser, multiUser, now, settingsOpen, toast } from '../store';
import type { WebSession } from '../types';
import { ago } from '../util';
import { Modal } from './Modal';

export function SettingsPanel() {
  const close = () => (settingsOpen.value = false);
  const [hook, setHook] = useState(config.value.webhook_url ?? '');
  const [saving, setSaving] = useState(false);
  const [pushBusy, setPushBusy] = useState(false);
  const [pushErr, setPushErr] = useState('');
  const [loggingOut, setLoggingOut] = useState(false);
  const [testing, setTesting] = useState(false);
  const sendTest = () => {
    setTesting(true);
    sendTestNotification()
      .then(() => toast('Test sent: it reaches every browser with push on, and the webhook', 'info', 4000))
      .catch((err) => toast(`The test failed: ${errorText(err)}`))
      .finally(() => setTesting(false));
  };
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
        {!pushSupported && (
          <p class="muted">
            This browser has no Web Push
            {location.protocol !== 'https:' && location.hostname !== 'localhost' && location.hostname !== '127.0.0.1'
              ? ' (it needs HTTPS)'
              : ''}
            .
          </p>
        )}
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
        <h3>Test</h3>
        <p class="muted small">A notification now, to each browser with push on, the webhook, and this page if it shows them.</p>
        <button type="button" class="btn" disabled={testing} onClick={sendTest} data-testid="send-test-notification">
          {testing ? 'Sending…' : 'Send a test'}
        </button>
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
        <button type="button" class="btn" onClick={() => {
            settingsOpen.value = false;
            helpOpen.value = true;
          }}>
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
            <li
              key={ws.id}
              class="web-session"
              data-testid="web-session"
              data-session-id={ws.id}
              data-current={ws.current ? 'true' : 'false'}
            >
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
