// Whether the page can reach corral at all (the server, not a machine behind a hub).

import { signal } from '@preact/signals';
import { ApiError } from './api';

/** The last probe failed on the network, or a proxy said corral behind it is down. */
export const unreachable = signal(false);

/** Classify a failed probe (GET /api/v1/auth/me): a network error or 502-504 means corral is down. */
export function noteProbeError(e: unknown): void {
  const down = !(e instanceof ApiError) || e.status === 0 || e.status === 502 || e.status === 503 || e.status === 504;
  if (down !== unreachable.peek()) unreachable.value = down;
}

export function noteReached(): void {
  if (unreachable.peek()) unreachable.value = false;
}
