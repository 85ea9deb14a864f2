import { applyDecorators, CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata, UseInterceptors } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiHeader } from '@nestjs/swagger';
import { AppConfig } from '@app/config';
import { DomainError, TransactionHost } from '@app/core';
import type { Request, Response } from 'express';
import { from, lastValueFrom, Observable } from 'rxjs';
import { requestFingerprint } from './fingerprint';
import { IdempotencyStore } from './idempotency.store';

export const IDEMPOTENT_KEY = 'idempotency:options';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

export interface IdempotentOptions {
  /**
   * What a replay answers instead of the first body (e.g. a secret shown once → null). It is
   * applied when the answer is stored, so what must not be kept (the secret) never is.
   */
  replay?: (body: unknown) => unknown;
  /** Extra request material for the fingerprint (e.g. an uploaded file's hash). */
  fingerprintExtra?: (req: Request) => string;
}

/**
 * Idempotency-Key, scoped to the connection. The handler runs inside one transaction that also
 * writes the key's record, so the effect and its record commit together or not at all.
 * In progress → 409 idempotency_key_in_use; same key, other request → 422 idempotency_key_reused;
 * same key, same request → the stored status and body, with `Idempotent-Replayed: true`.
 * Errors are not stored: the transaction rolls back, so a corrected retry may reuse the key.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly tx: TransactionHost,
    private readonly store: IdempotencyStore,
    private readonly config: AppConfig,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const options = this.reflector.get<IdempotentOptions | undefined>(IDEMPOTENT_KEY, context.getHandler());
    const req = context.switchToHttp().getRequest<Request & { principal?: { connectionId: string } }>();
    const header = req.headers['idempotency-key'];
    if (!options || header === undefined || !req.principal) return next.handle();
    const key = Array.isArray(header) ? header.join(',') : header;
    if (!KEY_FORMAT.test(key)) {
      throw new DomainError(
        'invalid_request',
        `Idempotency-Key: must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters.`,
      );
    }
    const res = context.switchToHttp().getResponse<Response>();
    const connectionId = req.principal.connectionId;
    const path = req.originalUrl.split('?')[0];
    const fingerprint = requestFingerprint(req.method, path, req.body, options.fingerprintExtra?.(req));

    return from(
      this.tx.run(async () => {
        if (!(await this.store.tryLock(connectionId, key))) {
          throw new DomainError('idempotency_key_in_use', 'A request with this Idempotency-Key is still in progress; retry later.');
        }
        const prior = await this.store.find(connectionId, key);
        if (prior) {
          if (prior.fingerprint !== fingerprint) {
            throw new DomainError('idempotency_key_reused', 'This Idempotency-Key was used with a different request.');
          }
          res.status(prior.statusCode);
          res.setHeader('Idempotent-Replayed', 'true');
          return prior.body;
        }
        const body = await lastValueFrom(next.handle(), { defaultValue: undefined });
        await this.store.save(
          connectionId,
          key,
          { method: req.method, path, fingerprint },
          { statusCode: res.statusCode, body: options.replay ? options.replay(body) : body },
          this.config.idempotencyTtlHours,
        );
        return body;
      }),
    );
  }
}

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
        'while the first is in progress, 409 idempotency_key_in_use; with another request, 422 idempotency_key_reused.',
      schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: '^[\\x21-\\x7E]+$' },
    }),
  );
