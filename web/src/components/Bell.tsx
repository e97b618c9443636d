// The bell (sessions that need you) and its drawer: who waits, and the recent notifications.

import { useEffect } from 'preact/hooks';
import {
  attention,
  bellOpen,
  clearAllNotifications,
  clearNotification,
  loadNotifications,
  notificationKey,
  openSession,
  sessionsById,
  shownNotifications,
  unseenNotifications,
} from '../store';
import { activity, ago, plainText, timeOfDay } from '../util';
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
  const list = shownNotifications.value;
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
                  <span class="att-act">
                    {s.status === 'review' ? (s.error ? `Failed: ${s.error}` : 'Finished, not seen yet') : activity(s)}
                  </span>
                </span>
              </button>
            </li>
          ))}
        </ul>
      </section>
      <section class="att-section">
        <div class="att-head">
          <h3>Recent notifications</h3>
          {list.length > 0 && (
            <button type="button" class="link-btn" onClick={clearAllNotifications} data-testid="clear-notifications">
              Clear all
            </button>
          )}
        </div>
        {list.length === 0 && <p class="muted">No notifications yet.</p>}
        <ul class="notif-list">
          {list.map((n) => {
            const s = sessionsById.value[n.session_id];
            const name = s?.name || n.session_name || 'A session';
            return (
              <li key={notificationKey(n)} class="notif-row">
                <button type="button" class="notif" disabled={!s} onClick={() => s && open(n.session_id)} data-testid="notification">
                  <StatusDot status={n.reason} title={n.reason} />
                  <span class="notif-main">
                    <span class="notif-name" data-testid="notification-session">
                      {n.device && <span class="notif-dev">{n.device}/</span>}
                      {name}
                    </span>
                    <span class="notif-msg">{notificationLine(n.message, name, n.reason)}</span>
                    <span class="notif-time" title={new Date(n.time).toLocaleString()}>
                      {timeOfDay(n.time)} · {ago(n.time)}
                      {!s && ' · session gone'}
                    </span>
                  </span>
                </button>
                <button
                  type="button"
                  class="icon-btn notif-clear"
                  aria-label={`Clear this notification of ${name}`}
                  title="Clear"
                  onClick={() => clearNotification(n)}
                  data-testid="clear-notification"
                >
                  <Icon name="x" size={14} />
                </button>
              </li>
            );
          })}
        </ul>
      </section>
    </Modal>
  );
}

/** A notification's text, plain, without the session's name it may start with (the row names it). */
function notificationLine(message: string, name: string, reason: string): string {
  let t = plainText(message || '');
  if (t.startsWith(`${name}: `)) t = t.slice(name.length + 2);
  else if (t.startsWith(`${name} `)) t = t.slice(name.length + 1);
  if (!t) return reason === 'needs-input' ? 'needs you' : reason === 'review' ? 'finished' : reason;
  return t.charAt(0).toUpperCase() + t.slice(1);
}
