import type { Session } from '../types';
import { statusLabel } from '../util';

/** The status dot: color and motion by status, a red ring for an error. */
export function StatusDot(props: { status: string; error?: boolean | string; title?: string; size?: 'sm' | 'md' }) {
  const err = !!props.error && props.status !== 'exited';
  const label = props.title ?? statusLabel({ status: props.status, error: err ? String(props.error) : '' });
  return (
    <span
      class={`dot dot-${props.status}${err ? ' dot-error' : ''}${props.size === 'md' ? ' dot-md' : ''}`}
      data-testid="status-dot"
      data-status={props.status}
      role="img"
      aria-label={label}
      title={label}
    />
  );
}

export function SessionDot(props: { s: Session; size?: 'sm' | 'md' }) {
  return <StatusDot status={props.s.status} error={props.s.error} size={props.size} />;
}
