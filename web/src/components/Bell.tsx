// The bell (sessions that need you) and its drawer: who waits, and the recent notifications.

import { useEffect } from 'preact/hooks';
import { attention, bellOpen, loadNotifications, notifications, openSession, sessionsById, unseenNotifications } from '../store';
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
        <h3>Recent notifications</h3>
        {list.length === 0 && <p class="muted">No notifications yet.</p>}
        <ul class="notif-list">
          {list.map((n) => {
            const s = sessionsById.value[n.session_id];
            return (
              <li key={`${n.seq}-${n.session_id}-${n.time}`}>
                <button type="button" class="notif" disabled={!s} onClick={() => s && open(n.session_id)} data-testid="notification">
                  <StatusDot
                    status={n.reason === 'needs-input' ? 'needs-input' : n.reason === 'review' ? 'review' : 'idle'}
                    title={n.reason}
                  />
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
