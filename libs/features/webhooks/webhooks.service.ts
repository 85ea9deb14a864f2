import { Injectable, Logger } from '@nestjs/common';
import { EVENT_SCOPES, EventName, SUBSCRIBABLE_EVENTS } from '@kernel/events';
import { Clock, isId, notFound, Page, PageRequest, validationFailed } from '@kernel/core';
import { CursorCodec, paginateRows, TransactionHost } from '@kernel/database';
import { AddressPolicy, NOT_PUBLIC } from './address-policy';
import { HostResolver } from './host-resolver';
import { GIVE_UP_REASONS } from './model/give-up';
import { giveUpPending, toWebhook, WEBHOOK_COLUMNS } from './webhook-rows';
import { parseNewWebhookUrl } from './model/webhook-url';
import { newSecret } from './model/secret-rotation';
import { WebhookEntity } from './webhook.entity';
import { ConnectionEntity } from '@features/connections';

/** A connection holds at most this many webhooks (removed ones do not count). */
export const MAX_WEBHOOKS_PER_CONNECTION = 10;

/** Who is asking: the calling connection, with the scopes it holds now. */
export interface WebhookOwner {
  organisationId: string;
  connectionId: string;
  scopes: string[];
}

export interface WebhookInput {
  url: string;
  events: string[];
}

/** Managing a connection's webhooks: add (the secret is returned once), list, read, remove. */
@Injectable()
export class WebhooksService {
  private readonly logger = new Logger(WebhooksService.name);

  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly policy: AddressPolicy,
    private readonly resolver: HostResolver,
    private readonly cursors: CursorCodec,
  ) {}

  /** Refusals (422 validation_failed) name the field and the rule. The answer carries the secret; nothing else ever does. */
  async create(owner: WebhookOwner, input: WebhookInput): Promise<{ webhook: WebhookEntity; secret: string }> {
    const target = parseNewWebhookUrl(input.url);
    const events = this.checkEvents(input.events, owner.scopes);
    await this.assertFewerThanMax(owner.connectionId);
    await this.assertPublicHost(target.hostname, target.ipLiteral);
    const secret = newSecret();
    return this.tx.run(async (m) => {
      // The connection's row lock serialises concurrent creations, so two cannot both pass the count.
      await m.query(`SELECT id FROM connections WHERE id = $1 FOR UPDATE`, [owner.connectionId]);
      await this.assertFewerThanMax(owner.connectionId);
      const [row] = await m.query(
        `INSERT INTO webhooks (organisation_id, connection_id, url, events, secret, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${WEBHOOK_COLUMNS}`,
        [owner.organisationId, owner.connectionId, input.url, events, secret, this.clock.now().toISOString()],
      );
      return { webhook: toWebhook(row), secret };
    });
  }

  /** The connection's webhooks, newest first. */
  async list(connectionId: string, page: PageRequest): Promise<Page<WebhookEntity>> {
    return paginateRows(this.tx.manager, page, this.cursors, {
      sql: `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE connection_id = $1 AND deleted_at IS NULL`,
      params: [connectionId],
      idType: 'bigint',
      isId,
      toItem: toWebhook,
      position: (w) => ({ createdAt: w.createdAt, id: w.id }),
    });
  }

  /** A webhook of this connection (another connection's, or a removed one, is not found). */
  async get(connectionId: string, id: string): Promise<WebhookEntity> {
    const [row] = isId(id)
      ? await this.tx.manager.query(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1 AND connection_id = $2 AND deleted_at IS NULL`, [id, connectionId])
      : [];
    if (!row) throw notFound('webhook');
    return toWebhook(row);
  }

  /**
   * A webhook of a connection of this organisation, with its connection, in one query (the console's
   * pages of one webhook load both on every request). Null when either is not there — the
   * connection is another organisation's or unknown, or the webhook is another connection's,
   * removed or unknown: callers that must say which look them up one by one.
   */
  async findWithConnection(organisationId: string, connectionId: string, id: string): Promise<{ conn: ConnectionEntity; hook: WebhookEntity } | null> {
    if (!isId(connectionId) || !isId(id)) return null;
    const [row] = await this.tx.manager.query(
      `SELECT ${WEBHOOK_COLUMNS.split(', ')
        .map((c) => `w.${c}`)
        .join(
          ', ',
        )}, c.organisation_id AS connection_organisation_id, c.name AS connection_name, c.scopes AS connection_scopes, c.created_at AS connection_created_at, c.revoked_at AS connection_revoked_at
         FROM webhooks w JOIN connections c ON c.id = w.connection_id
        WHERE w.id = $1 AND w.connection_id = $2 AND w.deleted_at IS NULL AND c.organisation_id = $3`,
      [id, connectionId, organisationId],
    );
    if (!row) return null;
    const conn = Object.assign(new ConnectionEntity(), {
      id: String(row.connection_id),
      organisationId: String(row.connection_organisation_id),
      name: String(row.connection_name),
      scopes: row.connection_scopes as string[],
      createdAt: new Date(row.connection_created_at as string),
      revokedAt: row.connection_revoked_at === null ? null : new Date(row.connection_revoked_at as string),
    });
    return { conn, hook: toWebhook(row) };
  }

  /** Removes it for good (its secrets are wiped) and gives up its queued deliveries with that reason. */
  async remove(connectionId: string, id: string): Promise<void> {
    if (!isId(id)) throw notFound('webhook');
    await this.tx.run(async (m) => {
      const now = this.clock.now();
      const rows: Array<{ id: string }> = await m.query(
        `WITH gone AS (
           UPDATE webhooks SET deleted_at = $3, secret = '', previous_secret = NULL, previous_secret_expires_at = NULL WHERE id = $1 AND connection_id = $2 AND deleted_at IS NULL RETURNING id)
         SELECT id FROM gone`,
        [id, connectionId, now.toISOString()],
      );
      if (rows.length === 0) throw notFound('webhook');
      await giveUpPending(m, id, GIVE_UP_REASONS.webhookRemoved, now);
    });
  }

  private checkEvents(events: string[], scopes: string[]): EventName[] {
    if (!Array.isArray(events) || events.length === 0) throw validationFailed('events', 'must list at least one event');
    const known = SUBSCRIBABLE_EVENTS as string[];
    for (const e of events) {
      if (e === 'webhook.test') {
        throw validationFailed('events', '"webhook.test" cannot be subscribed to: it is only sent by the test call');
      }
      if (!known.includes(e)) throw validationFailed('events', `"${e}" is not an event; the events are ${known.join(', ')}`);
      const scope = EVENT_SCOPES[e as EventName];
      if (!scopes.includes(scope)) {
        throw validationFailed('events', `"${e}" needs the scope ${scope}, which the connection does not hold`);
      }
    }
    return [...new Set(events as EventName[])];
  }

  private async assertFewerThanMax(connectionId: string): Promise<void> {
    const [{ n }] = await this.tx.manager.query(`SELECT count(*)::int AS n FROM webhooks WHERE connection_id = $1 AND deleted_at IS NULL`, [connectionId]);
    if (n >= MAX_WEBHOOKS_PER_CONNECTION) {
      throw validationFailed('connection', `already holds ${MAX_WEBHOOKS_PER_CONNECTION} webhooks, the most it may; remove one first`);
    }
  }

  /**
   * An IP literal must be allowed; a name must resolve only to allowed addresses. A name that
   * does not resolve now is accepted: its deliveries fail until it does (and are checked then).
   */
  private async assertPublicHost(hostname: string, ipLiteral: string | null): Promise<void> {
    if (ipLiteral) {
      const problem = this.policy.problem(ipLiteral);
      if (problem) throw validationFailed('url', `must be a public address, and ${ipLiteral} is ${problem}`);
      return;
    }
    const addresses = await this.resolver.resolve(hostname).catch(() => []);
    for (const a of addresses) {
      const problem = this.policy.problem(a.address);
      // Not the address: a key holder must not learn how internal names resolve (operators see it in the log).
      if (problem) {
        this.logger.warn(`webhook url refused: ${hostname} resolves to ${a.address}, ${problem}`);
        throw validationFailed('url', `must be a public address, and ${hostname} resolves to ${NOT_PUBLIC}`);
      }
    }
  }
}
