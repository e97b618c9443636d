import type { Session, Status } from '../types';
import { statusLabel } from '../util';

/**
 * The status dot: color and motion by status, a red ring for an error. offline: the machine is
 * away, the status is only the last known one (a hollow grey ring; data-status keeps the status).
 */
export function StatusDot(props: { status: Status; error?: boolean | string; title?: string; size?: 'sm' | 'md'; offline?: boolean }) {
  const err = !!props.error && props.status !== 'exited';
  const base = statusLabel({ status: props.status, error: err ? String(props.error) : '' });
  const label = props.title ?? (props.offline ? `Offline (last known: ${base})` : base);
  return (
    <span
      class={`dot dot-${props.status}${err ? ' dot-error' : ''}${props.offline ? ' dot-offline' : ''}${props.size === 'md' ? ' dot-md' : ''}`}
      data-testid="status-dot"
      data-status={props.status}
      data-offline={props.offline ? 'true' : undefined}
      role="img"
      aria-label={label}
      title={label}
    />
  );
}

export function SessionDot(props: { s: Session; size?: 'sm' | 'md' }) {
  return <StatusDot status={props.s.status} error={props.s.error} size={props.size} offline={!!props.s.offline} />;
}
