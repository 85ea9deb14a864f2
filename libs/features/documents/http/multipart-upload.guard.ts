import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import type { Request, Response } from 'express';
import { readMultipart, UploadedDocument } from './multipart-upload';

export type DocumentRequest = Request & { documentUpload?: UploadedDocument };

const isMultipart = (req: Request) => (req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data');

/**
 * Reads a multipart document request before the idempotency interceptor runs, so that the
 * Idempotency-Key fingerprint can include the file's hash (interceptors run after guards, and
 * the interceptor fingerprints before the handler). It runs after the global bearer guard, so
 * nothing is read from a caller without a valid key and the scope. JSON requests pass through.
 * The form fields become `req.body`; the file, spooled to a temporary file, is `req.documentUpload`.
 */
@Injectable()
export class MultipartUploadGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<DocumentRequest>();
    if (!isMultipart(req)) return true;
    const { fields, file } = await readMultipart(req, this.config.documentMaxFileBytes);
    // The spooled file lives as long as the request: closed (its space freed) once the answer is sent or the connection is gone.
    const res = context.switchToHttp().getResponse<Response>();
    if (res.closed) void file.file.close();
    else res.once('close', () => void file.file.close());
    req.body = fields;
    req.documentUpload = file;
    return true;
  }
}

/** The Idempotency-Key fingerprint's extra material: the uploaded file's hash, name and declared type. */
export const uploadFingerprint = (req: Request): string => {
  const upload = (req as DocumentRequest).documentUpload;
  return upload ? `file:${upload.sha256}:${upload.name ?? ''}:${upload.declaredType ?? ''}` : '';
};

/** The request's body (JSON, or the form fields) and its file, if multipart. */
export const DocumentInput = createParamDecorator((_: unknown, ctx: ExecutionContext): { body: unknown; upload: UploadedDocument | null } => {
  const req = ctx.switchToHttp().getRequest<DocumentRequest>();
  return { body: req.body, upload: req.documentUpload ?? null };
});
