// Short messages in a corner: errors and confirmations.

import { dismissToast, toasts } from '../store';
import { Icon } from './Icon';

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
