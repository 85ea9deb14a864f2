import { MAX_BULK_RESEND } from '../delivery-log.service';

/** The rules of GET /v1/webhooks/{id}/deliveries, as the operation's description. */
export const LIST_DELIVERIES_RULES = `
The webhook's deliveries, newest first (by when each was made), cursor-paginated like every list: \`limit\` and \`cursor\`,
and the answer's \`next_cursor\` (null on the last page). Repeat the same filters with each cursor. Scope \`webhooks:manage\`;
another connection's webhook answers 404.

Filters, all optional and combined: \`state\` — \`queued\` (its first attempt is on its way), \`waiting\` (for its next attempt on
the retry timetable), \`delivered\`, \`failed\` (eight attempts failed, or a test failed), \`given_up\` (stopped before an attempt,
see \`give_up_reason\`); \`event\`; \`since\` and \`until\`, ISO 8601 times with an offset (made at or after \`since\`, before
\`until\`). A bad filter, or an \`until\` not later than \`since\`, answers 400 \`invalid_request\`.

Each item carries its latest attempt's summary; \`GET /v1/webhooks/{id}/deliveries/{delivery_id}\` has every attempt's exchange.
Deliveries are kept 90 days after they finish.
`.trim();

/** The rules of GET /v1/webhooks/{id}/deliveries/{delivery_id}. */
export const GET_DELIVERY_RULES = `
One delivery of the webhook, with the body every attempt sent (byte for byte: the signature covers \`<t>.\` followed by it)
and every attempt of every series, oldest first, each with what it sent and what came back: the request headers
(\`service-signature\` included; never the secret), the status, the answer's headers, the first 8 KiB of its body
(\`body\` when it is text, otherwise \`body_base64\`; \`body_truncated\` when it was longer; \`body_size\` when known), and when
it failed, \`error_class\`. A delivery of another webhook, or an id that is not one, answers 404. Scope \`webhooks:manage\`.
`.trim();

/** The rules of POST /v1/webhooks/{id}/deliveries/{delivery_id}/resend. */
export const RESEND_DELIVERY_RULES = `
Sends the delivery again, as the console's Resend does. No body. IK. Scope \`webhooks:manage\`.

- Delivered, failed or given up: a new series of attempts starts now under the same delivery id (the receiver can discard a
  repeat by \`id\`), on the usual retry timetable. \`action\`: \`resent\`.
- Waiting for a retry: its next attempt is brought forward to now instead; it replaces the scheduled attempt, which is never
  made as well. \`action\`: \`tried_now\`.
- Queued (its first attempt is on its way), or a test delivery: 422 \`validation_failed\`.

The checks before every attempt still apply: a delivery of a switched-off webhook is given up again at once.
`.trim();

/** The rules of POST /v1/webhooks/{id}/recover. */
export const RECOVER_RULES = `
After a receiver outage: every delivery of the webhook made at or after \`since\` (and before \`until\`, when given) that failed,
was given up, or is waiting for a retry is sent now, the oldest first. Failed and given-up deliveries start a new series
under their own delivery id (\`resent\`); waiting ones have their next attempt brought forward to now (\`tried_now\`), never
doubled. Test deliveries are never resent. At most ${MAX_BULK_RESEND} per request: when \`more\` is true, call again for the next ones
(a waiting delivery already brought forward is not counted again). Body \`{since, until?}\`, ISO 8601 times with an offset;
a bad time, or an \`until\` not later than \`since\`, answers 422 \`validation_failed\`. IK. Scope \`webhooks:manage\`.
`.trim();
