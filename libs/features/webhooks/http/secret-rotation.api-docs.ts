/** The rules of POST /v1/webhooks/{id}/rotate-secret, as the operation's description. */
export const ROTATE_SECRET_RULES = `
Replaces the webhook's signing secret, for a secret that leaked or a scheduled change. Body \`{current_secret, expires_in_seconds?}\`.
IK. Scope \`webhooks:manage\`; another connection's webhook answers 404.

- \`current_secret\` must be the webhook's secret now (compared in constant time); otherwise 422 \`validation_failed\` and
  nothing changes. A lost secret cannot be rotated: removing and re-adding the webhook is still the way.
- The answer carries the new secret (\`whsec_…\`) — in this answer only. Repeating the request with the same
  \`Idempotency-Key\` answers \`secret\` null and \`secret_shown\` false.
- \`expires_in_seconds\` (0 to 604800, default 86400): how long the replaced secret keeps signing. Until then every attempt
  carries both signatures in the one header, the new secret's first: \`Service-Signature: t=<unix seconds>,v1=<new>,v1=<old>\`,
  so a receiver that accepts a header when one \`v1\` matches verifies with either secret. Whether the old one still signs is
  decided when each attempt is made (a retry scheduled before the rotation carries both while in the overlap, only the new
  one after it). 0 stops the old secret at once. A number outside 0 to 604800 answers 422 \`validation_failed\`.
- Rotating again during an overlap: the current secret becomes the previous one, and the older previous one stops signing at once.
`.trim();
