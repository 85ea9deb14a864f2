// Data of the list benchmark (bench/lists.bench.js): the organisation's cases and conversations
// grown with generate_series, cursors signed for known rows, and the plan Postgres chooses for a
// deep page. (The dedicated database and the tenant come from bench/harness.)
'use strict';
const { explainScan } = require('./harness/measure');
const { signedCursor } = require('./harness/setup');

/**
 * Grows the organisation to `total` cases (cases `from`..`total`) and one ended conversation per
 * new case. Case i was opened i seconds before a fixed instant, so added rows are older than those
 * already there and the first page is the same rows at every size.
 */
async function grow(db, org, from, total) {
  const started = Date.now();
  await db.query(`SET synchronous_commit = off`);
  const [{ before }] = (await db.query(`SELECT COALESCE(max(id), 0) AS before FROM cases`)).rows;
  await db.query(
    `INSERT INTO cases (organisation_id, external_ref, title, status, created_at, updated_at)
     SELECT $1, 'BENCH-' || i, 'Bench case ' || i, 'open', t, t
       FROM generate_series($2::int, $3::int) AS i
      CROSS JOIN LATERAL (SELECT '2026-11-01T00:00:00Z'::timestamptz - i * interval '1 second' AS t) AS at`,
    [org, from, total],
  );
  // Ids of 32 hex as the interpreting app makes them; half a second after the case.
  await db.query(
    `INSERT INTO conversations (id, organisation_id, case_id, language_a, language_b, status, started_at, ended_at, created_at)
     SELECT md5('bench-conversation-' || c.id), c.organisation_id, c.id, 'en', 'es', 'ended',
            c.created_at + interval '500 milliseconds', c.created_at + interval '900 milliseconds', c.created_at + interval '500 milliseconds'
       FROM cases c WHERE c.organisation_id = $1 AND c.id > $2`,
    [org, before],
  );
  await db.query(`VACUUM ANALYZE cases`);
  await db.query(`VACUUM ANALYZE conversations`);
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM cases WHERE organisation_id = $1)::int AS cases,
            (SELECT count(*) FROM conversations WHERE organisation_id = $1)::int AS conversations`,
    [org],
  );
  return { ...rows[0], insert_s: +((Date.now() - started) / 1000).toFixed(1) };
}

/** The row after the first `rowsBefore` rows of the list, and the cursor (as the api of `dist` signs it) whose page starts there. */
async function cursorAfter(dist, db, table, org, rowsBefore) {
  const { rows } = await db.query(`SELECT created_at, id FROM ${table} WHERE organisation_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`, [
    org,
    rowsBefore - 1,
  ]);
  return { row: rows[0], cursor: await signedCursor(dist, db, rows[0]) };
}

/** The plan and server-side time of the query of the page after `row`, written as paginate() writes it. */
async function explain(db, table, org, row, pageSize) {
  const [at, id] = [new Date(row.created_at).toISOString(), String(row.id).trim()];
  const idType = table === 'cases' ? 'bigint' : 'text';
  return explainScan(
    db,
    `SELECT * FROM ${table} t WHERE t.organisation_id = $1
       AND (t.created_at, t.id) < (CAST($2 AS timestamptz), CAST($3 AS ${idType}))
     ORDER BY t.created_at DESC, t.id DESC LIMIT ${pageSize + 1}`,
    [org, at, id],
  );
}

module.exports = { grow, cursorAfter, explain };
