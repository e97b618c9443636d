// The live connection's state, shown while it is down.

import { conn, connSince, loaded, now } from '../store';

export function ConnIndicator() {
  const c = conn.value;
  if (c === 'open') return null;
  if (c === 'connecting' && !loaded.value && now.value - connSince.value < 1500) return null;
  const secs = Math.max(0, Math.round((now.value - connSince.value) / 1000));
  return (
    <span
      class={`conn conn-${c}`}
      role="status"
      data-testid="conn-status"
      data-state={c}
      title="The live connection to corral is down; retrying"
    >
      <span class="spinner" aria-hidden="true" />
      {c === 'connecting' ? 'Connecting…' : 'Reconnecting…'}
      {secs >= 3 && <span class="muted"> {secs}s</span>}
    </span>
  );
}
