// The SCIM edge: the domain's ScimError through the one exception filter and error table of libs/http.
import { DomainError } from '@kernel/core';
import { ScimError, ScimType } from '../model/scim-error';
import type { Request, Response } from 'express';
import { ApiExceptionFilter, renderError } from '@web/http';

// SCIM errors go through the one filter and the one status table (issue 12, item 6).
describe('SCIM errors through the one error table', () => {
  const filter = new ApiExceptionFilter({ allowedMethods: () => [] } as never);
  const req = { path: '/scim/v2/Users', method: 'POST', originalUrl: '/scim/v2/Users' } as Request;
  const answer = (err: unknown) => {
    const out: { status?: number; type?: string; body?: Record<string, unknown>; headers: Record<string, string> } = { headers: {} };
    const res = {
      headersSent: false,
      setHeader: (k: string, v: string) => (out.headers[k] = v),
      status(s: number) {
        out.status = s;
        return this;
      },
      type(t: string) {
        out.type = t;
        return this;
      },
      send: (b: string) => (out.body = JSON.parse(b)),
    } as unknown as Response;
    renderError(req, res, filter.classify(err, req));
    return out;
  };

  it.each<[ScimType, number]>([
    ['invalidFilter', 400],
    ['tooMany', 400],
    ['mutability', 400],
    ['invalidSyntax', 400],
    ['invalidPath', 400],
    ['noTarget', 400],
    ['invalidValue', 422],
    ['uniqueness', 409],
  ])('%s answers %i in RFC 7644’s error schema', (scimType, status) => {
    expect(answer(new ScimError(scimType, 'why'))).toEqual({
      status,
      type: 'application/scim+json',
      headers: {},
      body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: String(status), scimType, detail: 'why' },
    });
  });

  it('a contract error on a SCIM path answers its table status, with no keyword', () => {
    expect(answer(new DomainError('scope_missing', 'no'))).toMatchObject({ status: 403, body: { status: '403', detail: 'no' } });
  });
});
