import { applyDecorators, CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata, UseInterceptors } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiHeader } from '@nestjs/swagger';
import { AppConfig } from '@kernel/config';
import { DomainError } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { Metrics, METRICS } from '@kernel/metrics';
import type { Request, Response } from 'express';
import type { Counter } from 'prom-client';
import { from, lastValueFrom, Observable } from 'rxjs';
import { EntityManager } from 'typeorm';
import { requestFingerprint } from './fingerprint';
import { IdempotencyStore, IdempotentRequest } from './idempotency.store';

export const IDEMPOTENT_KEY = 'idempotency:options';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

/**
 * How long a claimed key stays "in progress" without an answer: longer than any IK call takes
 * (the slowest, the test call, is 5 s of DNS and 10 s of POST), short enough that a request that
 * crashed holding its key frees it soon (Stripe-style lease; the key is then claimed afresh).
 */
export const CLAIM_LEASE_SECONDS = 60;

export interface IdempotentOptions {
  /**
   * What a replay answers instead of the first body (e.g. a secret shown once → null). It is
   * applied when the answer is stored, so what must not be kept (the secret) never is.
   */
  replay?: (body: unknown) => unknown;
  /** Extra request material for the fingerprint (e.g. an uploaded file's hash). */
  fingerprintExtra?: (req: Request) => string;
  /**
   * The handler waits on the network (DNS, a POST): its transaction is deferred to its first
   * `TransactionHost.run`, so no pooled connection is held while it waits (see IdempotencyInterceptor).
   */
  network?: boolean;
}

/**
 * Idempotency-Key, scoped to the connection. The key is claimed first, in one short statement
 * (a row without an answer, leased for CLAIM_LEASE_SECONDS), so no lock or connection is held
 * while the handler runs. The answer is stored in the transaction of the effect: for most calls
 * one transaction around the handler; for `network` calls the transaction the handler opens
 * after its network I/O (or a short one of its own). Either way effect and record commit together.
 * In progress → 409 idempotency_key_in_use; same key, other request → 422 idempotency_key_reused;
 * same key, same request → the stored status and body, with `Idempotent-Replayed: true`.
 * Errors are not stored: the transaction rolls back and the claim is dropped, so a corrected
 * retry may reuse the key.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly outcomes: Counter<'outcome'>;

  constructor(
    private readonly reflector: Reflector,
    private readonly tx: TransactionHost,
    private readonly store: IdempotencyStore,
    private readonly config: AppConfig,
    metrics: Metrics,
  ) {
    this.outcomes = metrics.counter(METRICS.idempotencyRequests);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const options = this.reflector.get<IdempotentOptions | undefined>(IDEMPOTENT_KEY, context.getHandler());
    const req = context.switchToHttp().getRequest<Request & { principal?: { connectionId: string } }>();
    const header = req.headers['idempotency-key'];
    if (!options || header === undefined || !req.principal) return next.handle();
    const key = Array.isArray(header) ? header.join(',') : header;
    if (!KEY_FORMAT.test(key)) {
      throw new DomainError('invalid_request', `Idempotency-Key: must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters.`);
    }
    const res = context.switchToHttp().getResponse<Response>();
    const path = req.originalUrl.split('?')[0];
    const request = { method: req.method, path, fingerprint: requestFingerprint(req.method, path, req.body, options.fingerprintExtra?.(req)) };
    return from(this.handle(options, next, res, req.principal.connectionId, key, request));
  }

  private async handle(
    options: IdempotentOptions,
    next: CallHandler,
    res: Response,
    connectionId: string,
    key: string,
    request: IdempotentRequest,
  ): Promise<unknown> {
    const claim = await this.store.claim(connectionId, key, request, CLAIM_LEASE_SECONDS);
    if (claim.kind === 'in_progress') {
      this.outcomes.inc({ outcome: 'in_use' });
      throw inUse();
    }
    if (claim.kind === 'done') {
      if (claim.stored.fingerprint !== request.fingerprint) {
        this.outcomes.inc({ outcome: 'reused' });
        throw new DomainError('idempotency_key_reused', 'This Idempotency-Key was used with a different request.');
      }
      this.outcomes.inc({ outcome: 'replayed' });
      res.status(claim.stored.statusCode);
      res.setHeader('Idempotent-Replayed', 'true');
      return claim.stored.body;
    }
    this.outcomes.inc({ outcome: 'first' });
    const handler = () => lastValueFrom(next.handle(), { defaultValue: undefined });
    const record = async (body: unknown, m: EntityManager) => {
      const response = { statusCode: res.statusCode, body: options.replay ? options.replay(body) : body };
      // Our lease ended and another request took the key: it answers; this one rolls back.
      if (!(await this.store.finish(m, connectionId, key, claim.token, response, this.config.idempotencyTtlHours))) throw inUse();
    };
    try {
      if (options.network) return await this.tx.deferred(handler, record);
      return await this.tx.run(async (m) => {
        const body = await handler();
        await record(body, m);
        return body;
      });
    } catch (err) {
      // If this fails too (Postgres away), the lease frees the key.
      await this.store.release(connectionId, key, claim.token).catch(() => undefined);
      throw err;
    }
  }
}

const inUse = () => new DomainError('idempotency_key_in_use', 'A request with this Idempotency-Key is still in progress; retry later.');

/** Marks a call as accepting `Idempotency-Key` (IK in the contract), binds the interceptor and documents the header. */
export const Idempotent = (options: IdempotentOptions = {}) =>
  applyDecorators(
    SetMetadata(IDEMPOTENT_KEY, options),
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Makes a retry safe: 1 to 255 visible ASCII characters, scoped to the connection, remembered for 24 hours. ' +
        'The same key with the same request answers the first answer again (Idempotent-Replayed: true); ' +
        'while the first is in progress, 409 idempotency_key_in_use; with another request, 422 idempotency_key_reused. ' +
        'An error answer is not stored (the key may be used again); a request cut off before answering frees its key within 60 seconds.',
      schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: '^[\\x21-\\x7E]+$' },
    }),
  );
