import { DomainError, validationFailed } from '@app/core';
import { fileTooLarge } from '@app/domain';
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import busboy, { type Busboy } from 'busboy';

/** The file of a multipart document request, held in memory (at most the configured limit). */
export interface UploadedDocument {
  content: Buffer;
  name: string | null;
  declaredType: string | null;
  sha256: string;
}

export interface MultipartResult {
  fields: Record<string, string>;
  file: UploadedDocument;
}

/** Room for the form fields and part headers around the file, for the Content-Length check. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
const FIELD_NAMES = ['case_id', 'target_language', 'source_language'];
export const FILE_FIELD = 'file';

/**
 * Reads a multipart/form-data document request: exactly one file part named `file` plus the
 * form fields. The file limit is enforced while the body streams in: a Content-Length beyond it
 * is refused before any of it is parsed, and a body that grows past it is refused the moment it
 * does, its chunks dropped, the rest of the request read and thrown away so the answer can be
 * sent on a healthy connection.
 */
export function readMultipart(req: Request, maxFileBytes: number): Promise<MultipartResult> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxFileBytes + MULTIPART_OVERHEAD_BYTES) {
    req.resume();
    return Promise.reject(fileTooLarge(maxFileBytes));
  }
  return new Promise<MultipartResult>((resolve, reject) => {
    let parser: Busboy;
    try {
      // fileSize + 1: busboy reports reaching the limit, and a file of exactly the limit is allowed.
      parser = busboy({
        headers: req.headers,
        limits: { fileSize: maxFileBytes + 1, files: 1, fields: 10, fieldSize: 1024, fieldNameSize: 100, parts: 12, headerPairs: 20 },
      });
    } catch (err) {
      req.resume();
      return reject(new DomainError('invalid_request', `The multipart body cannot be read: ${(err as Error).message}.`));
    }
    const fields: Record<string, string> = {};
    let file: UploadedDocument | null = null;
    let pendingFile: Promise<void> | null = null;
    let settled = false;

    const stop = (err: DomainError) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      req.resume(); // drain and discard the rest
      reject(err);
    };

    parser.on('file', (name, stream, info) => {
      // Every stream busboy hands out emits 'error' when the body ends inside its part: without a
      // listener that error would end the process (one truncated request must not).
      const cutShort = () =>
        stop(new DomainError('invalid_request', 'The multipart body ended inside a part; send the whole body, closed by its final boundary.'));
      if (name !== FILE_FIELD) {
        stream.on('error', cutShort);
        stream.resume();
        return stop(validationFailed(name, `is not a known field; send the document as the file part "${FILE_FIELD}"`));
      }
      const chunks: Buffer[] = [];
      const hash = createHash('sha256');
      let size = 0;
      pendingFile = new Promise<void>((done) => {
        stream.on('error', () => {
          chunks.length = 0;
          cutShort();
          done();
        });
        stream.on('data', (chunk: Buffer) => {
          if (settled) return;
          size += chunk.length;
          if (size > maxFileBytes) {
            chunks.length = 0;
            return stop(fileTooLarge(maxFileBytes));
          }
          chunks.push(chunk);
          hash.update(chunk);
        });
        stream.on('limit', () => {
          chunks.length = 0;
          stop(fileTooLarge(maxFileBytes));
        });
        stream.on('end', () => {
          if (!settled) {
            file = { content: Buffer.concat(chunks, size), name: info.filename ?? null, declaredType: info.mimeType || null, sha256: hash.digest('hex') };
          }
          done();
        });
      });
    });
    parser.on('field', (name, value, info) => {
      if (name === FILE_FIELD) return stop(validationFailed(FILE_FIELD, 'must be a file part (with a filename), not a plain field'));
      if (!FIELD_NAMES.includes(name)) return stop(validationFailed(info.nameTruncated ? `${name}…` : name, 'is not a known field'));
      if (info.valueTruncated) return stop(validationFailed(name, 'is too long'));
      if (name in fields) return stop(validationFailed(name, 'must be sent once'));
      fields[name] = value;
    });
    parser.on('filesLimit', () => stop(validationFailed(FILE_FIELD, 'exactly one file must be sent')));
    parser.on('fieldsLimit', () => stop(validationFailed('body', 'has too many fields')));
    parser.on('partsLimit', () => stop(validationFailed('body', 'has too many parts')));
    parser.on('error', (err: Error) => stop(new DomainError('invalid_request', `The multipart body cannot be read: ${err.message}.`)));
    parser.on('close', async () => {
      await pendingFile;
      if (settled) return;
      if (!file) return stop(validationFailed(FILE_FIELD, 'exactly one file must be sent'));
      settled = true;
      resolve({ fields, file });
    });
    const aborted = () => stop(new DomainError('invalid_request', 'The request was aborted.'));
    req.on('aborted', aborted);
    req.on('error', aborted);
    req.pipe(parser);
  });
}
