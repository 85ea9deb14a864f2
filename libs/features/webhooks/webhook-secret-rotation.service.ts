import { Injectable } from '@nestjs/common';
import { Clock, isId, notFound, validationFailed } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { DEFAULT_SECRET_OVERLAP_SECONDS, MAX_SECRET_OVERLAP_SECONDS, newSecret, secretMatches } from './model/secret-rotation';

export interface RotatedSecret {
  webhookId: string;
  /** The new secret: answered once, never stored anywhere but the webhook's row. */
  secret: string;
  /** Until when the replaced secret signs as well; null when it stopped at once (an overlap of 0). */
  previousSecretExpiresAt: Date | null;
}

/**
 * Rotating a webhook's signing secret: for a secret that leaked or a scheduled change, never a
 * lost one (the caller proves it holds the current secret; a lost one still means removing and
 * re-adding the webhook). The replaced secret keeps signing, beside the new one, for the overlap
 * asked; a rotation during an overlap makes the current secret the previous one and drops the
 * older one at once (a webhook has at most two secrets).
 */
@Injectable()
export class WebhookSecretRotationService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  /**
   * `overlapSeconds`: 0 to 7 days (default 24 hours). A webhook of another connection, removed or
   * unknown is not found; a `currentSecret` that is not the webhook's is 422 and changes nothing.
   */
  async rotate(connectionId: string, webhookId: string, currentSecret: string, overlapSeconds = DEFAULT_SECRET_OVERLAP_SECONDS): Promise<RotatedSecret> {
    if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_SECRET_OVERLAP_SECONDS) {
      throw validationFailed('expires_in_seconds', `must be a whole number of seconds from 0 to ${MAX_SECRET_OVERLAP_SECONDS} (7 days)`);
    }
    if (!isId(webhookId)) throw notFound('webhook');
    return this.tx.run(async (m) => {
      // The row lock orders concurrent rotations: the second compares against the first's new secret.
      const [row] = await m.query(`SELECT id, secret FROM webhooks WHERE id = $1 AND connection_id = $2 AND deleted_at IS NULL FOR UPDATE`, [
        webhookId,
        connectionId,
      ]);
      if (!row) throw notFound('webhook');
      if (typeof currentSecret !== 'string' || !secretMatches(currentSecret, String(row.secret))) {
        throw validationFailed('current_secret', "is not the webhook's signing secret (a lost secret cannot be rotated: remove the webhook and add it again)");
      }
      const secret = newSecret();
      const expiresAt = overlapSeconds === 0 ? null : new Date(this.clock.now().getTime() + overlapSeconds * 1000);
      await m.query(`UPDATE webhooks SET secret = $2, previous_secret = $3, previous_secret_expires_at = $4 WHERE id = $1`, [
        webhookId,
        secret,
        expiresAt ? row.secret : null,
        expiresAt?.toISOString() ?? null,
      ]);
      return { webhookId: String(row.id), secret, previousSecretExpiresAt: expiresAt };
    });
  }
}
