import { Injectable, Logger } from '@nestjs/common';
import { Clock, DEFAULT_PAGE_SIZE, isId, MAX_PAGE_SIZE, notFound, Page, PageRequest, validationFailed } from '@kernel/core';
import { CursorCodec, paginateRows, PreparedStatements, TransactionHost } from '@kernel/database';
import { Metrics, METRICS } from '@kernel/metrics';
import type { Counter } from 'prom-client';
import { EntityManager } from 'typeorm';
import { ScimCaller } from './model/scim-caller';
import {
  IdentityProvider,
  identityProviderOf,
  keptDetail,
  keptUserAgent,
  PROVISIONING_OUTCOMES,
  PROVISIONING_RESOURCE_TYPES,
  ProvisioningChanges,
  ProvisioningOperation,
  ProvisioningOutcome,
  ProvisioningResourceType,
} from './model/provisioning-event';

/** One row of the provisioning log. */
export interface ProvisioningEvent {
  id: string;
  occurredAt: Date;
  connectionId: string;
  connectionName: string;
  identityProvider: string;
  userAgent: string | null;
  operation: ProvisioningOperation;
  resourceType: ProvisioningResourceType;
  resourceId: string | null;
  outcome: ProvisioningOutcome;
  status: number;
  scimType: string | null;
  detail: string | null;
  changes: ProvisioningChanges | null;
  requestId: string | null;
}

/** What a successful SCIM write did, recorded in its own transaction. */
export interface SucceededWrite {
  operation: ProvisioningOperation;
  resourceType: 'User' | 'Group';
  resourceId: string;
  status: number;
  changes: ProvisioningChanges;
}

/** What a refused SCIM request was, recorded once its answer is sent. */
export interface RefusedRequest {
  operation: ProvisioningOperation;
  resourceType: ProvisioningResourceType;
  resourceId: string | null;
  status: number;
  scimType: string | null;
  detail: string | null;
}

/** Narrows the log: outcome, resource type, connection, and a time range [since, until). */
export interface ProvisioningFilter {
  outcome?: string;
  resourceType?: string;
  connectionId?: string;
  since?: Date;
  until?: Date;
}

/** Records a successful write in the transaction `m` of the change. */
export type WriteRecorder = (m: EntityManager, caller: ScimCaller, write: SucceededWrite) => Promise<void>;

const INSERT = `INSERT INTO provisioning_events
  (organisation_id, connection_id, created_at, identity_provider, user_agent, operation, resource_type, resource_id, outcome, status, scim_type, detail, changes, request_id)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`;

const COLUMNS = `e.id, e.created_at, e.connection_id, c.name AS connection_name, e.identity_provider, e.user_agent, e.operation, e.resource_type,
  e.resource_id, e.outcome, e.status, e.scim_type, e.detail, e.changes, e.request_id`;

const toEvent = (r: Record<string, unknown>): ProvisioningEvent => ({
  id: String(r.id),
  occurredAt: new Date(r.created_at as string),
  connectionId: String(r.connection_id),
  connectionName: r.connection_name as string,
  identityProvider: r.identity_provider as string,
  userAgent: (r.user_agent as string | null) ?? null,
  operation: r.operation as ProvisioningOperation,
  resourceType: ((r.resource_type as string | null) ?? 'other') as ProvisioningResourceType,
  resourceId: (r.resource_id as string | null) ?? null,
  outcome: r.outcome as ProvisioningOutcome,
  status: Number(r.status),
  scimType: (r.scim_type as string | null) ?? null,
  detail: (r.detail as string | null) ?? null,
  changes: (r.changes as ProvisioningChanges | null) ?? null,
  requestId: (r.request_id as string | null) ?? null,
});

/** How many distinct User-Agents the log keeps read (a connection sends the same one with every request). */
const AGENTS_KEPT = 64;

/** The insert failed inside a change's transaction: the change is made again without its row. */
class LogUnwritten extends Error {}

/**
 * The provisioning log: every SCIM write that changed something (one insert in the change's own
 * transaction) and every refused SCIM request (an autocommitted insert once the answer is sent,
 * outside the transaction that failed). A log write that fails never changes an answer: a
 * refusal's row is dropped, and a change whose row could not be written (its transaction is then
 * aborted) is made again, without the row; both are logged and counted
 * (`integrations_provisioning_log_failures_total`).
 */
@Injectable()
export class ProvisioningLogService {
  private readonly logger = new Logger(ProvisioningLogService.name);
  private readonly failures: Counter<'outcome'>;
  /** User-Agents as read for the log (identity provider, kept text), so each is parsed once, not per request. */
  private readonly agents = new Map<string, readonly [IdentityProvider, string | null]>();

  constructor(
    private readonly tx: TransactionHost,
    private readonly statements: PreparedStatements,
    private readonly clock: Clock,
    private readonly cursors: CursorCodec,
    metrics: Metrics,
  ) {
    this.failures = metrics.counter(METRICS.provisioningLogFailures);
  }

  /**
   * Runs a SCIM write, `work`, handing it the recorder of its success. `work` opens its own
   * (outermost) transaction and records in it; if the record's insert fails, that transaction
   * rolled back whole, so `work` runs once more with a recorder that writes nothing.
   */
  async written<T>(work: (record: WriteRecorder) => Promise<T>): Promise<T> {
    let failure: unknown;
    const record: WriteRecorder = async (m, caller, write) => {
      try {
        await this.insert(m, caller, 'succeeded', write);
      } catch (err) {
        failure = err;
        throw new LogUnwritten('the provisioning log row was not written');
      }
    };
    try {
      return await work(record);
    } catch (err) {
      // Within a caller's transaction the change cannot be made again here: the error stands.
      if (failure === undefined || !(err instanceof LogUnwritten) || this.tx.inTransaction) throw err;
      this.unwritten('succeeded', failure);
      return work(async () => undefined);
    }
  }

  /** Records a refusal (its answer already sent); never throws, never waited for by the answer. */
  refused(caller: ScimCaller, refusal: RefusedRequest): void {
    this.insert(undefined, caller, 'refused', { ...refusal, changes: null }).catch((err: unknown) => this.unwritten('refused', err));
  }

  /**
   * The organisation's log, newest first, keyset-paginated (no offset, no count): the
   * organisation's index serves every page, the refusals' partial index a page of refusals.
   */
  async list(organisationId: string, page: PageRequest = {}, filter: ProvisioningFilter = {}): Promise<Page<ProvisioningEvent>> {
    const limit = Math.min(Math.max(page.limit ?? DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE);
    const params: unknown[] = [organisationId];
    let where = 'e.organisation_id = $1';
    if (filter.outcome !== undefined) {
      if (!(PROVISIONING_OUTCOMES as readonly string[]).includes(filter.outcome)) {
        throw validationFailed('outcome', `must be one of ${PROVISIONING_OUTCOMES.join(', ')}`);
      }
      params.push(filter.outcome);
      where += ` AND e.outcome = $${params.length}`;
    }
    if (filter.resourceType !== undefined) {
      if (!(PROVISIONING_RESOURCE_TYPES as readonly string[]).includes(filter.resourceType)) {
        throw validationFailed('resource_type', `must be one of ${PROVISIONING_RESOURCE_TYPES.join(', ')}`);
      }
      params.push(filter.resourceType);
      where += ` AND e.resource_type = $${params.length}`;
    }
    if (filter.connectionId !== undefined) {
      if (!isId(filter.connectionId)) throw validationFailed('connection', 'must be a connection id');
      params.push(filter.connectionId);
      where += ` AND e.connection_id = $${params.length}`;
    }
    if (filter.since && Number.isNaN(filter.since.getTime())) throw validationFailed('since', 'must be a time');
    if (filter.until && Number.isNaN(filter.until.getTime())) throw validationFailed('until', 'must be a time');
    if (filter.since && filter.until && filter.until.getTime() <= filter.since.getTime()) throw validationFailed('until', 'must be later than since');
    if (filter.since) {
      params.push(filter.since.toISOString());
      where += ` AND e.created_at >= $${params.length}`;
    }
    if (filter.until) {
      params.push(filter.until.toISOString());
      where += ` AND e.created_at < $${params.length}`;
    }
    // paginateRows adds the keyset condition and order on `created_at, id`, which only the log has.
    return paginateRows(this.tx.manager, { ...page, limit }, this.cursors, {
      sql: `SELECT * FROM (SELECT ${COLUMNS} FROM provisioning_events e JOIN connections c ON c.id = e.connection_id WHERE ${where}) e WHERE true`,
      params,
      idType: 'bigint',
      isId,
      toItem: toEvent,
      position: (e) => ({ createdAt: e.occurredAt, id: e.id }),
    });
  }

  /** One event of the organisation's log; another organisation's, or an id that is not one, is not found. */
  async get(organisationId: string, id: string): Promise<ProvisioningEvent> {
    const [row] = isId(id)
      ? await this.tx.manager.query(
          `SELECT ${COLUMNS} FROM provisioning_events e JOIN connections c ON c.id = e.connection_id WHERE e.id = $1 AND e.organisation_id = $2`,
          [id, organisationId],
        )
      : [];
    if (!row) throw notFound('provisioning event');
    return toEvent(row);
  }

  private async insert(
    m: EntityManager | undefined,
    caller: ScimCaller,
    outcome: ProvisioningOutcome,
    e: Omit<RefusedRequest, 'scimType' | 'detail'> & { scimType?: string | null; detail?: string | null; changes: ProvisioningChanges | null },
  ): Promise<void> {
    const [identityProvider, userAgent] = this.agent(caller.userAgent);
    await this.statements.queryIn(m, 'provisioning_event_insert', INSERT, [
      caller.organisationId,
      caller.connectionId,
      this.clock.now().toISOString(),
      identityProvider,
      userAgent,
      e.operation,
      e.resourceType,
      e.resourceId,
      outcome,
      e.status,
      e.scimType ?? null,
      keptDetail(e.detail),
      e.changes === null ? null : JSON.stringify(e.changes),
      caller.requestId ?? null,
    ]);
  }

  /** The identity provider a User-Agent names and the text kept of it; the map is emptied when full, so any agents a client sends cost memory only up to AGENTS_KEPT. */
  private agent(userAgent: string | null | undefined): readonly [IdentityProvider, string | null] {
    if (!userAgent) return ['other', null];
    let read = this.agents.get(userAgent);
    if (read === undefined) {
      if (this.agents.size >= AGENTS_KEPT) this.agents.clear();
      read = [identityProviderOf(userAgent), keptUserAgent(userAgent)];
      this.agents.set(userAgent, read);
    }
    return read;
  }

  private unwritten(outcome: ProvisioningOutcome, err: unknown): void {
    this.failures.inc({ outcome });
    this.logger.error(`provisioning log: a ${outcome} row was not written: ${(err as Error)?.message ?? String(err)}`);
  }
}
