/** The rules of POST /v1/webhooks/{id}/enable, as the operation's description. */
export const ENABLE_RULES = `
Switches a switched-off webhook back on: \`switched_off_at\` becomes null and events are delivered to it again from now.
Its failing period starts afresh: the three days before a switch-off count from its next failed attempt. Events that
occurred while it was switched off made no delivery to it, and are not sent. The deliveries that were waiting when it was
switched off were given up (\`give_up_reason\` \`webhook_switched_off\`): with \`recover_since\`, every delivery made at or
after that time that is given up is sent again now, the oldest first (a new series under its own delivery id, as a resend
does), at most 500 per request (\`recovery.more\`: send the rest with \`POST /v1/webhooks/{id}/recover\`).

Body (optional): \`{recover_since?}\`, an ISO 8601 time with its offset, not in the future and within the last 90 days; otherwise
422 \`validation_failed\` naming \`recover_since\`. A webhook that is not switched off is left as it is: 200 with
\`switched_on\` false and \`recovery\` null (use \`POST /v1/webhooks/{id}/recover\` to resend). The answer wraps the contract's
webhook object: \`{data: {webhook, switched_on, recovery}}\`. IK. Scope \`webhooks:manage\`; another connection's, a removed or
an unknown webhook answers 404.
`.trim();
