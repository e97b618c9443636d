// Who is logged in, as GET /api/v1/auth/me says (the login flow is ../auth.ts).

import { batch, signal } from '@preact/signals';
import type { AuthMe } from '../types';

export type AuthState = 'checking' | 'ok' | 'login';

export const auth = signal<AuthState>('checking');
/** null when unknown (the 401 body did not say). */
export const passwordSet = signal<boolean | null>(null);
/** A hub: many users (the login asks for a name) and many machines. */
export const multiUser = signal(false);
/** Who is logged in ('' when unknown). */
export const currentUser = signal('');

/** Take what GET /api/v1/auth/me (or its 401 body) says. */
export function applyMe(b: AuthMe | undefined | null): void {
  if (!b || typeof b !== 'object') return;
  batch(() => {
    if (typeof b.password_set === 'boolean') passwordSet.value = b.password_set;
    if (typeof b.multi_user === 'boolean') multiUser.value = b.multi_user;
    if (typeof b.user === 'string') currentUser.value = b.user;
  });
}

export function resetAuth(): void {
  currentUser.value = '';
}
