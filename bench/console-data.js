// Data of the console benchmark (bench/console.bench.js): a webhook's delivery log grown with
// generate_series, cursors signed as the api signs them, and the plan Postgres chooses for a deep page.
'use strict';
const { signedCursor } = require('./harness/setup');
const { explainScan } = require('./harness/measure');

/**
 * Grows the webhook's log to `total` deliveries (numbers `from`..`total`), each with its attempt:
 * delivery i was made i seconds before a fixed instant, so added rows are older and the first page
 * is the same rows at every size. One in 20 failed, one in 50 given up, the rest delivered; the
 * four events in turn.
 */
async function grow(db, hook, from, total) {
  const started = Date.now();
  await db.query(`SET synchronous_commit = off`);
  await db.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, series, attempts,
                                     give_up_reason, next_attempt_at, created_at, updated_at, finished_at)
     SELECT md5('bench-delivery-' || $1::bigint || '-' || i), $1, $2, $3,
            (ARRAY['conversation.ended', 'summary.ready', 'document.translated', 'user.joined'])[1 + i % 4],
            t, jsonb_build_object('conversation_id', md5('bench-conversation-' || i)),
            s.state, 1, CASE s.state WHEN 'failed' THEN 8 WHEN 'given_up' THEN 0 ELSE 1 END,
            CASE s.state WHEN 'given_up' THEN 'webhook_switched_off' END, NULL, t, t, t
       FROM generate_series($4::int, $5::int) AS i
      CROSS JOIN LATERAL (SELECT '2026-11-01T00:00:00Z'::timestamptz - i * interval '1 second' AS t) AS at
      CROSS JOIN LATERAL (SELECT CASE WHEN i % 20 = 0 THEN 'failed' WHEN i % 50 = 1 THEN 'given_up' ELSE 'delivered' END AS state) AS s`,
    [hook.id, hook.organisationId, hook.connectionId, from, total],
  );
  await db.query(
    `INSERT INTO webhook_delivery_attempts (delivery_id, series, number, attempted_at, succeeded, status, duration_ms, error)
     SELECT md5('bench-delivery-' || $3::bigint || '-' || i), 1, 1, '2026-11-01T00:00:00Z'::timestamptz - i * interval '1 second' + interval '40 milliseconds',
            i % 20 <> 0, CASE WHEN i % 20 = 0 THEN 503 ELSE 200 END, 40 + i % 60, CASE WHEN i % 20 = 0 THEN 'answered 503' END
       FROM generate_series($1::int, $2::int) AS i
      WHERE NOT (i % 20 <> 0 AND i % 50 = 1)`,
    [from, total, hook.id],
  );
  await db.query(`VACUUM ANALYZE webhook_deliveries`);
  await db.query(`VACUUM ANALYZE webhook_delivery_attempts`);
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`, [hook.id]);
  return { deliveries: rows[0].n, insert_s: +((Date.now() - started) / 1000).toFixed(1) };
}

/** The `created_at` and `id` of the row after the first `rowsBefore` rows of the webhook's log. */
async function rowAfter(db, hook, rowsBefore) {
  const { rows } = await db.query(`SELECT created_at, id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`, [
    hook.id,
    rowsBefore - 1,
  ]);
  return rows[0];
}

/** A cursor as the api of `dist` issues it (signed with the installation's cursor secret), after the first `rowsBefore` rows of the log. */
const cursorAfter = async (dist, db, hook, rowsBefore) => signedCursor(dist, db, await rowAfter(db, hook, rowsBefore));

/** The plan and server time of the deep page's query, written as paginateRows writes it. */
async function explainDeep(db, hook, rowsBefore, pageSize) {
  const row = await rowAfter(db, hook, rowsBefore);
  const { execution_ms, node, index, rows_removed_by_filter } = await explainScan(
    db,
    `SELECT * FROM webhook_deliveries WHERE webhook_id = $1
       AND (created_at, id) < ($2::timestamptz, $3::char(32)) ORDER BY created_at DESC, id DESC LIMIT ${pageSize + 1}`,
    [hook.id, row.created_at, row.id],
  );
  return { execution_ms, node, index, rows_removed_by_filter };
}

module.exports = { cursorAfter, explainDeep, grow };
