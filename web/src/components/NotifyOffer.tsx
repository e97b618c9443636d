// The first visit's offer to turn notifications on (once per browser; Settings has the rest).

import { useState } from 'preact/hooks';
import { errorText } from '../api';
import { acceptNotificationOffer, dismissNotificationOffer, offerNotifications } from '../notify';
import { toast } from '../store';

export function NotifyOffer() {
  const [busy, setBusy] = useState(false);
  if (!offerNotifications.value) return null;
  const accept = () => {
    setBusy(true);
    acceptNotificationOffer()
      .then(() => toast('Notifications on: a session that needs you will say so', 'info', 3000))
      .catch((e) => toast(`Notifications: ${errorText(e)}`))
      .finally(() => setBusy(false));
  };
  return (
    <div class="notify-offer" role="region" aria-label="Notifications" data-testid="notify-offer">
      <span>Get a notification when a session needs you, with Allow and Deny on it?</span>
      <span class="btn-row">
        <button type="button" class="btn btn-primary" disabled={busy} onClick={accept} data-testid="notify-offer-accept">
          Turn on
        </button>
        <button type="button" class="btn" onClick={dismissNotificationOffer} data-testid="notify-offer-dismiss">
          Not now
        </button>
      </span>
    </div>
  );
}
