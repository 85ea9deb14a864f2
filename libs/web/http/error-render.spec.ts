import { DomainError, ERROR_CODES, ErrorCode } from '@kernel/core';
import type { Request, Response } from 'express';
import { renderError, STATUS_BY_CODE } from './error-render';

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

  it("answers RFC 7644's error schema under /scim/ (any case), status as a string, with the same status", () => {
    const { res, sent } = recorder();
    renderError(req('/SCIM/v2/Users/1'), res, { code: 'not_found', message: 'No such user.' });
    expect(sent.status).toBe(404);
    expect(sent.type).toBe('application/scim+json');
    expect(JSON.parse(sent.body!)).toEqual({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404', detail: 'No such user.' });
  });

  it('writes nothing once the answer has started', () => {
    const { res, sent } = recorder();
    (res as { headersSent: boolean }).headersSent = true;
    renderError(req('/v1/me'), res, { code: 'server_error', message: 'x' });
    expect(sent).toEqual({ headers: {} });
  });
});
