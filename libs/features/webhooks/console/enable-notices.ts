import { MAX_BULK_RESEND } from '../delivery-log.service';

/** How the Webhooks page words what switching back on did (`?done=` codes, with the count in `resent`). */
export function enabledNotice(done: unknown, resent: unknown): string | undefined {
  const on = 'The webhook is switched back on: events are sent to it again from now.';
  if (done === 'enabled')
    return `${on} Its deliveries given up while it was off can be sent again from its Deliveries page, with the form for after a receiver outage.`;
  if (done === 'enabled-none') return `${on} No delivery made since the time you gave had been given up: there was nothing to resend.`;
  if (done === 'already-on') return 'The webhook was already switched on: nothing was changed and nothing was resent.';
  const n = typeof resent === 'string' && /^\d{1,6}$/.test(resent) ? Number(resent) : null;
  if (n === null) return undefined;
  const deliveries = `${n} deliver${n === 1 ? 'y' : 'ies'}`;
  if (done === 'enabled-resent')
    return `${on} ${deliveries} given up since the time you gave ${n === 1 ? 'is' : 'are'} being sent again, each as a new series of attempts under its own delivery id.`;
  if (done === 'enabled-more')
    return (
      `${on} The oldest ${deliveries} given up since the time you gave are being sent again (at most ${MAX_BULK_RESEND} at a time); ` +
      'more remain: send them from its Deliveries page, with the form for after a receiver outage.'
    );
  return undefined;
}
