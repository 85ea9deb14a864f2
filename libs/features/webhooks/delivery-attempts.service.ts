import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { isDatabaseUnavailable, PreparedStatements, TransactionHost } from '@kernel/database';
import { Metrics, METRICS } from '@kernel/metrics';
import type { Counter, Histogram } from 'prom-client';
import { Clock, MicroBatch, CURRENT_POLICY_VERSION_SQL } from '@kernel/core';
import { retryDelayMs } from './model/retry-timetable';
import { previousSecretInForce } from './model/secret-rotation';
import { AttemptContext, deliveryBody, GiveUpReason, giveUpReason } from './model/give-up';
import { SendResult, WebhookSender } from './webhook-sender';

/** A job may wake this much before its delivery's time (timer granularity) and still attempt. */
const DUE_TOLERANCE_MS = 20;
/**
 * Reads and records of concurrent attempts go to Postgres as group commits: a read (or a record)
 * goes at the end of its event-loop turn when no other read (record) is under way; while one is,
 * those that come meanwhile wait for it and then go together, at most BATCH_MAX per statement. Alone,
 * an attempt waits for nothing; busy, a batch grows with the round trip it waited for. A fixed
 * waiting window would add its length to every delivery's latency at low rates
 * (`bench/webhooks.bench.js` measures both).
 */
const BATCH_WAIT_MS = 0;
const BATCH_IN_FLIGHT = 1;
const BATCH_MAX = 200;
/**
 * How long the outcome of an attempt already sent is kept and recorded again while Postgres is
 * away (backoff from 200 ms to 5 s) before the job gives up; long enough for a restart or a failover.
 */
export const RECORD_PATIENCE_MS = 10 * 60_000;
const RECORD_BACKOFF_MS = [200, 500, 1000, 2000, 5000];

export type AttemptOutcome =
  /** No such delivery, or it is delivered, failed or given up: nothing to do. */
  | { kind: 'nothing' }
  /** Still pending, but its time comes in `inMs`. */
  | { kind: 'not_due'; inMs: number }
  | { kind: 'given_up'; reason: GiveUpReason }
  /** Due, but its webhook already has as many attempts in flight as allowed: the gate keeps it waiting (see AttemptGate). */
  | { kind: 'parked'; webhookId: string }
  | { kind: 'delivered'; result: SendResult; number: number }
  /** `retryInMs` null: no further attempt (the eighth failed, or it was a test). */
  | { kind: 'failed'; result: SendResult; number: number; retryInMs: number | null };

/**
 * Lets an attempt through to its webhook, or not (the worker's per-webhook cap on attempts in
 * flight). `enter` is asked once the delivery is due and passes every check, right before the
 * POST; when it answers false nothing is sent and the outcome is `parked`. `leave` is called once
 * the POST is over (whatever its result), as the outcome's record starts; the attempt returns once both are done.
 */
export interface AttemptGate {
  enter(delivery: { id: string; webhookId: string }): Promise<boolean>;
  leave(delivery: { id: string; webhookId: string }): Promise<void>;
}

/** The deliveries and, in the same read, everything the checks before an attempt need. */
const READ = `
  SELECT d.id, d.event, d.occurred_at, d.data, d.is_test, d.state, d.series, d.attempts, d.next_attempt_at, d.webhook_id,
         w.url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.deleted_at AS webhook_deleted_at, w.switched_off_at,
         c.revoked_at AS connection_revoked_at, c.scopes, o.module_enabled, o.accepted_policy_version,
         ${CURRENT_POLICY_VERSION_SQL} AS policy_version
    FROM webhook_deliveries d
    JOIN webhooks w ON w.id = d.webhook_id
    JOIN connections c ON c.id = d.connection_id
    JOIN organisations o ON o.id = d.organisation_id
   WHERE d.id = ANY ($1::char(32)[])`;

/**
 * Records attempts in one statement: their log lines with what each sent and got back (always: every attempt is logged; once: the
 * statement run again after a commit whose answer was lost adds nothing, by the unique index on
 * (delivery, series, number, attempted_at) rather than a search of the log), each
 * delivery's new state — only if it is still the pending attempt that was read (a delivery given
 * up meanwhile stays given up; a duplicate job cannot move it twice) — and each webhook's run of
 * failures (tests never count): a success ends the run; a failure starts one unless one is running.
 */
const FINISH = `
  WITH i AS (
    SELECT * FROM unnest($1::char(32)[], $2::int[], $3::int[], $4::text[], $5::timestamptz[], $6::timestamptz[], $7::timestamptz[],
                         $8::timestamptz[], $9::boolean[], $10::int[], $11::int[], $12::text[], $13::bigint[], $14::boolean[],
                         $15::text[], $16::text[], $17::bytea[], $18::int[], $19::boolean[], $20::text[])
      AS t (id, series, attempts, state, next_at, finished_at, updated_at, attempted_at, ok, status, duration_ms, error, webhook_id, is_test,
            request_headers, response_headers, response_body, response_body_size, response_body_truncated, error_class)
  ), d AS (
    UPDATE webhook_deliveries w SET state = i.state, next_attempt_at = i.next_at, finished_at = i.finished_at,
           attempts = w.attempts + 1, updated_at = i.updated_at
      FROM i
     WHERE w.id = i.id AND w.series = i.series AND w.attempts = i.attempts AND w.state IN ('queued', 'waiting')
    RETURNING w.id
  ), logged AS (
    INSERT INTO webhook_delivery_attempts (delivery_id, series, number, attempted_at, succeeded, status, duration_ms, error,
                                           request_headers, response_headers, response_body, response_body_size, response_body_truncated, error_class)
    SELECT id, series, attempts + 1, attempted_at, ok, status, duration_ms, error,
           request_headers::jsonb, response_headers::jsonb, response_body, response_body_size, response_body_truncated, error_class FROM i
    ON CONFLICT (delivery_id, series, number, attempted_at) DO NOTHING
  ), runs AS (
    SELECT webhook_id,
           (array_agg(ok ORDER BY attempted_at DESC))[1] AS last_ok,
           bool_or(ok) AS any_ok,
           min(attempted_at) FILTER (WHERE NOT ok AND attempted_at > last_success) AS first_failure
      FROM (SELECT *, COALESCE(max(attempted_at) FILTER (WHERE ok) OVER (PARTITION BY webhook_id), '-infinity') AS last_success
              FROM i WHERE NOT is_test) x
     GROUP BY webhook_id
  ), run AS (
    UPDATE webhooks h SET failing_since = CASE WHEN r.last_ok THEN NULL WHEN r.any_ok THEN r.first_failure
                                               ELSE COALESCE(h.failing_since, r.first_failure) END
      FROM runs r
     WHERE h.id = r.webhook_id
       AND CASE WHEN r.last_ok THEN h.failing_since IS NOT NULL ELSE r.any_ok OR h.failing_since IS NULL END
  )
  SELECT count(*)::int AS moved FROM d`;

const json = (v: unknown) => (v === null ? null : JSON.stringify(v));

const GIVE_UP = `
  UPDATE webhook_deliveries SET state = 'given_up', give_up_reason = $4, next_attempt_at = NULL, finished_at = $5, updated_at = $5
   WHERE id = $1 AND series = $2 AND attempts = $3 AND state IN ('queued', 'waiting')`;

interface Finished {
  d: AttemptContext;
  state: string;
  nextAt: Date | null;
  finishedAt: Date | null;
  updatedAt: Date;
  attemptedAt: Date;
  result: SendResult;
}

/**
 * One attempt of one delivery: read, check, send, record; what to do next is the caller's (the
 * queue's). This is the hot path: outside a transaction, the reads and the records of all the
 * attempts in flight are gathered per event-loop turn into one statement each (PreparedStatements),
 * so a busy worker makes a few round trips per dozens of deliveries.
 *
 * There is no lock or lease around the POST: BullMQ runs one job per delivery id per queue, and
 * the rare duplicate (a job re-run after a crash, a recovered job racing its original) sends the
 * delivery twice — which the contract allows (receivers discard repeats by `id`) — while the state
 * moves only once, guarded by (series, attempts).
 *
 * Once sent, an attempt's outcome must be recorded, or the delivery still looks pending and is
 * sent again: while Postgres is away the outcome is kept in memory (the job stays active, so
 * neither BullMQ nor the recovery sweep runs it again) and recorded with backoff when Postgres is
 * back (RECORD_PATIENCE_MS at most). A job for a delivery whose outcome is waiting here does not
 * send it again. What is left (a worker that dies holding an unrecorded outcome) is in docs/webhooks.md.
 */
@Injectable()
export class DeliveryAttemptsService {
  private readonly logger = new Logger(DeliveryAttemptsService.name);
  /** Sent, outcome not yet recorded (Postgres away): delivery id → the recording. */
  private readonly unrecorded = new Map<string, Promise<void>>();
  private readonly reads = new MicroBatch<string, AttemptContext | undefined>((ids) => this.readMany(ids), BATCH_MAX, BATCH_WAIT_MS, BATCH_IN_FLIGHT);
  private readonly finishes = new MicroBatch<Finished, void>(
    async (items) => {
      await this.finishMany(items);
      return items.map(() => undefined);
    },
    BATCH_MAX,
    BATCH_WAIT_MS,
    BATCH_IN_FLIGHT,
  );

  private readonly counts: { attempts: Counter<'event' | 'outcome'>; duration: Histogram<'outcome'>; deliveries: Counter<'event' | 'outcome'> };

  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly sender: WebhookSender,
    private readonly config: AppConfig,
    private readonly statements: PreparedStatements,
    metrics: Metrics,
  ) {
    this.counts = {
      attempts: metrics.counter(METRICS.webhookAttempts),
      duration: metrics.histogram(METRICS.webhookAttemptDuration),
      deliveries: metrics.counter(METRICS.webhookDeliveries),
    };
  }

  /** `gate`: the worker's per-webhook cap; without one (the test call) the attempt is never held back. */
  async attempt(deliveryId: string, gate?: AttemptGate): Promise<AttemptOutcome> {
    const recording = this.unrecorded.get(deliveryId);
    if (recording) {
      // Sent already by another job here: never again; its state moves when the record lands.
      await recording.catch(() => undefined);
      return { kind: 'nothing' };
    }
    const d = this.tx.inTransaction ? (await this.readMany([deliveryId]))[0] : await this.reads.push(deliveryId);
    const now = this.clock.now();
    if (!d) return { kind: 'nothing' };
    const slot = { id: d.id, webhookId: String(d.webhook_id) };
    // Not attempted after all: a slot it may have been handed while it waited goes to the next one.
    const pass = async (outcome: AttemptOutcome): Promise<AttemptOutcome> => {
      await gate?.leave(slot);
      return outcome;
    };
    if (d.state !== 'queued' && d.state !== 'waiting') return pass({ kind: 'nothing' });
    const dueIn = (d.next_attempt_at?.getTime() ?? 0) - now.getTime();
    if (dueIn > DUE_TOLERANCE_MS) return pass({ kind: 'not_due', inMs: dueIn });

    const reason = giveUpReason(d);
    if (reason) {
      await this.statements.query('webhook-attempt-give-up', GIVE_UP, [d.id, d.series, d.attempts, reason, now.toISOString()]);
      this.counts.deliveries.inc({ event: d.event, outcome: 'given_up' });
      return pass({ kind: 'given_up', reason });
    }

    if (gate && !(await gate.enter(slot))) return { kind: 'parked', webhookId: slot.webhookId };
    let result: SendResult;
    try {
      result = await this.sender.send({
        url: d.url,
        body: deliveryBody(d),
        secret: d.secret,
        // A rotated-out secret signs too while in its overlap, judged at this attempt's time.
        previousSecret: previousSecretInForce(d.previous_secret, d.previous_secret_expires_at, now),
        timestamp: Math.floor(now.getTime() / 1000),
      });
    } catch (err) {
      await gate?.leave(slot);
      throw err;
    }
    // The slot is given back while the outcome is recorded (one round trip less per attempt); both are over before the attempt returns.
    const left = gate?.leave(slot);
    const number = d.attempts + 1;
    const retryInMs = result.ok || d.is_test ? null : retryDelayMs(number, this.config.webhookRetryScale);
    const ended = this.clock.now();
    const finished: Finished = {
      d,
      state: result.ok ? 'delivered' : retryInMs === null ? 'failed' : 'waiting',
      nextAt: retryInMs === null ? null : new Date(ended.getTime() + retryInMs),
      finishedAt: retryInMs === null ? ended : null,
      updatedAt: ended,
      attemptedAt: now,
      result,
    };
    await Promise.all([this.tx.inTransaction ? this.finishMany([finished]) : this.record(finished), left]);
    this.countAttempt(d.event, result, finished.state);
    return result.ok ? { kind: 'delivered', result, number } : { kind: 'failed', result, number, retryInMs };
  }

  /** Once recorded: the attempt by outcome, its duration, and the delivery if it ended. */
  private countAttempt(event: string, result: SendResult, state: string): void {
    const outcome = result.ok ? 'success' : result.status === null ? 'no_answer' : 'http_error';
    this.counts.attempts.inc({ event, outcome });
    this.counts.duration.observe({ outcome }, result.durationMs / 1000);
    if (state === 'delivered' || state === 'failed') this.counts.deliveries.inc({ event, outcome: state });
  }

  /** Records a sent attempt, again and again while Postgres is unreachable (see the class comment). */
  private async record(finished: Finished): Promise<void> {
    const id = finished.d.id;
    const recording = (async () => {
      const deadline = Date.now() + RECORD_PATIENCE_MS;
      for (let i = 0; ; i++) {
        try {
          await this.finishes.push(finished);
          if (i > 0) this.logger.log(`delivery ${id}: outcome recorded after ${i} tries (Postgres was away)`);
          return;
        } catch (err) {
          if (!isDatabaseUnavailable(err) || Date.now() > deadline) throw err;
          if (i === 0) this.logger.warn(`delivery ${id}: sent, outcome not recorded (${(err as Error).message}); trying again until Postgres is back`);
          await new Promise((r) => setTimeout(r, RECORD_BACKOFF_MS[Math.min(i, RECORD_BACKOFF_MS.length - 1)]));
        }
      }
    })();
    this.unrecorded.set(id, recording);
    try {
      await recording;
    } finally {
      this.unrecorded.delete(id);
    }
  }

  private async readMany(ids: string[]): Promise<Array<AttemptContext | undefined>> {
    const rows = await this.statements.query<AttemptContext>('webhook-attempt-read', READ, [ids]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id));
  }

  private async finishMany(items: Finished[]): Promise<void> {
    const col = <T>(f: (x: Finished) => T) => items.map(f);
    const iso = (d: Date | null) => d?.toISOString() ?? null;
    await this.statements.query('webhook-attempt-finish', FINISH, [
      col((x) => x.d.id),
      col((x) => x.d.series),
      col((x) => x.d.attempts),
      col((x) => x.state),
      col((x) => iso(x.nextAt)),
      col((x) => iso(x.finishedAt)),
      col((x) => iso(x.updatedAt)),
      col((x) => iso(x.attemptedAt)),
      col((x) => x.result.ok),
      col((x) => x.result.status),
      col((x) => x.result.durationMs),
      col((x) => x.result.error),
      col((x) => x.d.webhook_id),
      col((x) => x.d.is_test),
      col((x) => json(x.result.exchange.requestHeaders)),
      col((x) => json(x.result.exchange.responseHeaders)),
      col((x) => x.result.exchange.responseBody),
      col((x) => x.result.exchange.responseBodySize),
      col((x) => x.result.exchange.responseBodyTruncated),
      col((x) => x.result.exchange.errorClass),
    ]);
  }
}
