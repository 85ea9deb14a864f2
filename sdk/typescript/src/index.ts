export { Integrations, type IntegrationsOptions, type Page } from './client';
export { ApiError } from './errors';
export { retryAfterMs, takesIdempotencyKey, type RetryOptions } from './retrying-fetch';
export { verifyWebhook, SIGNATURE_HEADER, SIGNATURE_TOLERANCE_SECONDS, type VerifyOptions } from './webhooks';
export type * from './generated/types.gen';
