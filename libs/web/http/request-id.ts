import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';

const WELL_FORMED = /^[A-Za-z0-9._:-]{8,128}$/;

/** Every answer carries `X-Request-Id`: the caller's when well-formed, else a fresh UUID. */
export function assignRequestId(req: Request, res: Response): void {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && WELL_FORMED.test(incoming) ? incoming : randomUUID();
  (req as Request & { id: string }).id = id;
  res.setHeader('X-Request-Id', id);
}
