/** The rules of POST /v1/webhooks, as the operation's description. */
export const CREATE_WEBHOOK_RULES = `
Adds a webhook to the calling connection: body \`{url, events}\`. IK. Scope \`webhooks:manage\`.

- The answer carries the signing secret (\`whsec_…\`) — in this answer only. Losing it requires removing and re-adding the webhook.
- Repeating the request with the same \`Idempotency-Key\` answers the same webhook with \`secret\` null and \`secret_shown\` false.
- An event whose scope the connection does not hold answers 422 \`validation_failed\`, naming the scope. An unknown event,
  \`webhook.test\` (nobody subscribes to it) and an empty list answer 422 too.
- A connection holds at most 10 webhooks; an eleventh answers 422 \`validation_failed\`.
- The url must be https on port 443, without a user name or password, and public (see \`url\`). Deliveries check the address
  again each time: the name is looked up once per delivery attempt, every address it answers must be public, and the
  connection goes to a checked address only. Redirects are never followed.

**Deliveries.** Each event the webhook subscribes to is POSTed as \`application/json\` \`{id, event, occurred_at, data}\`
(ids only) with \`Service-Signature: t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<raw body>" keyed with the secret>\`.
A 2xx within 10 seconds is a success; anything else (a 3xx included) is retried 1 min, 5 min, 30 min, 2 h, 6 h, 12 h and 24 h
after each failure: eight attempts in all. \`id\` is the same on every attempt: use it to discard repeats, and \`occurred_at\`
to order. After three days of failures with no success the webhook is switched off (\`switched_off_at\`) and the
organisation's integration managers are emailed. At most 10 attempts per webhook are in flight at once (an operator
setting): while the receiver is slow or hangs, its other deliveries wait their turn, oldest first, and are sent later; the
retry delays count from each attempt actually made.
`.trim();

/** The rules of POST /v1/webhooks/{id}/test. */
export const TEST_WEBHOOK_RULES = `
Sends a signed \`webhook.test\` event (\`data\`: \`webhook_id\`, \`connection_id\`) to the webhook now and answers what happened.
Tried once and never retried; logged like any delivery; it never counts towards switching the webhook off, and a
switched-off webhook can still be tested. A second test of the same webhook sooner than 5 seconds after the last answers
429 \`rate_limited\` with \`Retry-After\`; while the service cannot count that spacing (its Redis is unreachable)
it is not counted and the test is sent. No body. IK. Scope \`webhooks:manage\`.
`.trim();
