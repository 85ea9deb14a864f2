import { DomainError, ERROR_CODES, ErrorCode } from '@kernel/core';
import type { Request, Response } from 'express';
import { ErrorDialect, useErrorDialect } from './error-dialect';
import { RenderedError, renderError, STATUS_BY_CODE } from './error-render';

/** The contract's Errors table, as written there: status → codes. */
const CONTRACT: Record<number, ErrorCode[]> = {
  400: ['invalid_request'],
  401: ['unauthorised'],
  403: ['module_off', 'scope_missing', 'ip_not_allowed', 'permission_not_grantable'],
  404: ['not_found'],
  405: ['method_not_allowed'],
  409: ['idempotency_key_in_use', 'case_closed', 'last_people_manager', 'group_holds_cases', 'in_another_organisation'],
  413: ['file_too_large', 'text_too_long'],
  415: ['file_type_not_supported'],
  422: ['validation_failed', 'idempotency_key_reused', 'unknown_permission'],
  429: ['rate_limited'],
  500: ['server_error'],
};

/** A response that records what renderError did to it. */
function recorder() {
  const sent: { status?: number; type?: string; json?: unknown; body?: string; headers: Record<string, string> } = { headers: {} };
  const res = {
    headersSent: false,
    setHeader: (k: string, v: string) => void (sent.headers[k] = v),
    status(s: number) {
      sent.status = s;
      return this;
    },
    type(t: string) {
      sent.type = t;
      return this;
    },
    json: (j: unknown) => void (sent.json = j),
    send: (b: string) => void (sent.body = b),
  };
  return { res: res as unknown as Response, sent };
}
const req = (url: string) => ({ originalUrl: url, url }) as Request;

describe('the error table (ErrorCode → status)', () => {
  it("has a status for every code, and it is the contract's", () => {
    expect(Object.keys(STATUS_BY_CODE).sort()).toEqual([...ERROR_CODES].sort());
    for (const [status, codes] of Object.entries(CONTRACT)) for (const code of codes) expect([code, STATUS_BY_CODE[code]]).toEqual([code, Number(status)]);
    expect(Object.values(CONTRACT).flat().sort()).toEqual([...ERROR_CODES].sort());
  });

  it.each(ERROR_CODES.map((c) => [c]))('%s is answered with its status in the {error:{code,message}} envelope', (code) => {
    const { res, sent } = recorder();
    const err = new DomainError(code, 'What went wrong.');
    renderError(req('/v1/me'), res, err);
    expect(sent.status).toBe(STATUS_BY_CODE[code]);
    expect(sent.json).toEqual({ error: { code, message: 'What went wrong.' } });
  });

  it('sends the headers an error carries (Retry-After)', () => {
    const { res, sent } = recorder();
    renderError(req('/v1/me'), res, { code: 'rate_limited', message: 'Slow down.', headers: { 'Retry-After': '30' } });
    expect(sent.headers).toEqual({ 'Retry-After': '30' });
    expect(sent.status).toBe(429);
  });

  it('answers through the dialect that owns the path, with the error, its kind and its status; elsewhere the envelope', () => {
    const seen: Array<[RenderedError, number]> = [];
    const dialect: ErrorDialect = {
      owns: (url) => url.startsWith('/other/'),
      jsonMediaTypes: [],
      rateLimit: { policy: 'scim', label: 'Other' },
      answer: (err, status) => (seen.push([err, status]), { status: 418, type: 'text/plain; charset=utf-8', body: `${err.kind}:${err.message}` }),
    };
    useErrorDialect(dialect);
    const { res, sent } = recorder();
    renderError(req('/other/1'), res, { code: 'validation_failed', message: 'Nope.', kind: 'syntax', headers: { 'Retry-After': '1' } });
    expect(seen).toEqual([[{ code: 'validation_failed', message: 'Nope.', kind: 'syntax', headers: { 'Retry-After': '1' } }, 422]]);
    expect(sent).toMatchObject({ status: 418, type: 'text/plain; charset=utf-8', body: 'syntax:Nope.', headers: { 'Retry-After': '1' } });
    const rest = recorder();
    renderError(req('/v1/other/1'), rest.res, { code: 'validation_failed', message: 'Nope.', kind: 'syntax' });
    expect(rest.sent).toMatchObject({ status: 422, json: { error: { code: 'validation_failed', message: 'Nope.' } } });
  });

  it('writes nothing once the answer has started', () => {
    const { res, sent } = recorder();
    (res as { headersSent: boolean }).headersSent = true;
    renderError(req('/v1/me'), res, { code: 'server_error', message: 'x' });
    expect(sent).toEqual({ headers: {} });
  });
});

describe('a dialect told of its answers', () => {
  const told: Array<{ url: string; status: number; sentFirst: boolean }> = [];
  let sentBody: string | undefined;
  const dialect: ErrorDialect = {
    owns: (url) => url.startsWith('/told/') || url.startsWith('/throws/'),
    jsonMediaTypes: [],
    answer: (err, status) => ({ status, type: 'text/plain', body: err.message }),
    answered(r, answer) {
      if ((r.originalUrl ?? '').startsWith('/throws/')) throw new Error('the hook failed');
      told.push({ url: r.originalUrl, status: answer.status, sentFirst: sentBody === answer.body });
    },
  };
  useErrorDialect(dialect);

  it('is told once the answer is sent, with the request and the answer', () => {
    const { res, sent } = recorder();
    const send = res.send.bind(res);
    res.send = ((b: string) => {
      sentBody = b;
      return send(b);
    }) as Response['send'];
    renderError(req('/told/x'), res, new DomainError('not_found', 'No such thing.'));
    expect(sent.status).toBe(404);
    expect(told).toEqual([{ url: '/told/x', status: 404, sentFirst: true }]);
  });

  it('a hook that throws leaves the answer as it was sent', () => {
    const { res, sent } = recorder();
    expect(() => renderError(req('/throws/x'), res, new DomainError('invalid_request', 'Bad.'))).not.toThrow();
    expect({ status: sent.status, body: sent.body }).toEqual({ status: 400, body: 'Bad.' });
  });
});
