/** The document's top-level description: the rules that hold for every call. */
export const API_DESCRIPTION = `
The one place where an organisation's own systems connect to the interpreting and translation platform.
REST under \`/v1/\`, SCIM 2.0 under \`/scim/v2/\`, signed webhooks out. Only HTTPS is answered.

**Authentication.** Every call except \`GET\` (or \`HEAD\`) of this document sends \`Authorization: Bearer svc_<64 lowercase hex>\`
(the scheme in any letter case), once: a call with more than one \`Authorization\` header answers 400 \`invalid_request\`
and counts as a refused call. A key in the query, a cookie or the body is not read. Scopes are held by the connection and gate each call.
The key is checked before anything else: without a valid key, an unknown path, a wrong method or a
malformed body answers 401 too, and no body is read. 60 calls refused 401 from one address within a clock
minute make every call from that address (this document included) answer 429 \`rate_limited\` until the
next minute (\`Retry-After\` says how long). While the service cannot count refusals (its Redis is
unreachable) they are not counted: a wrong key still answers 401 at once.

**Rate limits.** Each connection has a token bucket (by default 100 calls a second, 200 at once); SCIM
calls under \`/scim/v2/\` have a bucket of their own, so a directory import does not slow REST calls.
Every answer to a call with a valid key carries \`RateLimit-Policy\` (\`"rest";q=200;w=2\`: 200 calls,
refilled in 2 seconds) and \`RateLimit\` (\`"rest";r=57;t=2\`: 57 calls left, full again in 2 seconds),
the fields of draft-ietf-httpapi-ratelimit-headers-10. A call that finds the bucket empty answers 429
\`rate_limited\` with \`Retry-After\` (seconds) and changes nothing. While the service cannot reach its
Redis, calls are not limited and \`RateLimit\` is left out.

**Answers.** A single object is \`{"data": …}\`; a list is \`{"data": […], "next_cursor": "…" | null}\`;
an error is \`{"error": {"code": "…", "message": "…"}}\`. Every answer with a body carries \`X-Request-Id\`
(yours, when you send a well-formed one of 8 to 128 characters \`[A-Za-z0-9._:-]\`).
Ids are strings of digits; timestamps are ISO 8601 in UTC ending in \`Z\`.

**Tracing.** When the operator has turned tracing on (OpenTelemetry), a W3C \`traceparent\` (and
\`tracestate\`) header sent with a call makes the service's spans part of your trace, and the webhook
deliveries of the events the call causes carry a \`traceparent\` of that trace. With tracing off both
headers are ignored, and none is sent.

**Lists** are newest first, paged by cursor: \`limit\` (1 to 100, default 25) and \`cursor\` (the
\`next_cursor\` of the previous page). Cursors are opaque and signed by the service. An unknown query
parameter, a bad limit or a cursor this API did not issue (made up, altered, or empty: omit \`cursor\` for the
first page) answers 400 \`invalid_request\`.

**Idempotency.** Calls marked IK accept \`Idempotency-Key\` (1 to 255 visible ASCII characters), scoped
to the connection and remembered for 24 hours. The same key with the same request (method, path, body)
answers the stored status and body again, with \`Idempotent-Replayed: true\`; while the first request is
still running it answers 409 \`idempotency_key_in_use\`; with a different request, 422
\`idempotency_key_reused\`. Errors are not stored, so a corrected request may reuse its key.

**Errors.** Objects of another organisation answer 404, never 403. A known path with a wrong method
answers 405 \`method_not_allowed\` with \`Allow\`, and an unknown path 404 \`not_found\`: answers to no
described operation, which list only what a call of theirs can answer. A body field that is not known, or not valid, answers 422 \`validation_failed\`
naming the field, once, with the first rule it breaks (a missing one: \`events: is required\`). Names every JavaScript object has
(\`__proto__\`, \`constructor\`, \`toString\`…) are unknown fields at any depth, and unknown query
parameters of a list. No string may contain the NUL character and no array more than 1000 values (the
schemas say so), and JSON may nest at most 32 levels. Text must be well-formed Unicode: a lone surrogate
(the escape \`"\\ud800"\` without its pair), in a value or a field name, answers 422 naming the field, and a
body that is not UTF-8 answers 400; nothing is stored in place of what was sent. A request that does not arrive in time (headers
within 10 seconds, a body never idle for 10 seconds, the whole request within 300 seconds, by default)
answers 408 \`invalid_request\` and the connection is closed.
`.trim();

/** What each tag of the REST interface groups, as the reference's sections introduce them. */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  Connection: 'The connection the key belongs to: its organisation and scopes.',
  Groups: "The organisation's groups and the permissions each grants its people.",
  People: "The organisation's people (users) and the invitations sent to new ones.",
  Cases: 'Cases, which hold conversations and documents; a conversation is started from a case.',
  Conversations: 'Interpreted conversations of the organisation, their facts, transcripts and summaries (read only).',
  Webhooks: "The connection's webhooks, their delivery log, resends, recovery, secret rotation and switching back on. What is sent is under Events.",
  Documents: 'Texts and files sent for translation, and their translations.',
  Provisioning: 'What identity providers changed over SCIM, and what was refused, for a partner to follow.',
};
