// The SCIM edge: the domain's ScimError, and the web kit's own refusals, through the one exception
// filter and error table of @web/http, answered in RFC 7644's schema by SCIM_ERRORS.
import { DomainError } from '@kernel/core';
import { ApiExceptionFilter, rawErrorBody, renderError, useErrorDialect } from '@web/http';
import type { Request, Response } from 'express';
import { ScimError, ScimNotImplemented, ScimType } from '../model/scim-error';
import { SCIM_ERRORS } from './scim-errors';

useErrorDialect(SCIM_ERRORS);

describe('SCIM errors through the one error table', () => {
  const filter = new ApiExceptionFilter({ allowedMethods: () => [] } as never);
  const req = { path: '/scim/v2/Users', method: 'POST', originalUrl: '/scim/v2/Users' } as Request;
  /** What renderError writes for `err` on `path`. */
  const kit = (path: string, err: Parameters<typeof renderError>[2]) => {
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
      json: (b: Record<string, unknown>) => (out.body = b),
    } as unknown as Response;
    renderError({ path, method: 'POST', originalUrl: path, url: path } as Request, res, err);
    return out;
  };
  /** What the exception filter and renderError answer for an error raised on a SCIM path. */
  const answer = (err: unknown) => kit(req.path, filter.classify(err, req));

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
      type: 'application/scim+json; charset=utf-8',
      headers: {},
      body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: String(status), scimType, detail: 'why' },
    });
  });

  it('a contract error on a SCIM path answers its table status, with no keyword', () => {
    expect(answer(new DomainError('scope_missing', 'no'))).toMatchObject({ status: 403, body: { status: '403', detail: 'no' } });
  });

  it("the web kit's refusals: a syntax problem is 400 invalidSyntax, a value 422 invalidValue, too large 413 with no keyword", () => {
    expect(kit('/scim/v2/Users', { code: 'validation_failed', message: 'a: is not a known field', kind: 'syntax' })).toEqual({
      status: 400,
      type: 'application/scim+json; charset=utf-8',
      headers: {},
      body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '400', scimType: 'invalidSyntax', detail: 'a: is not a known field' },
    });
    expect(kit('/scim/v2/Users', { code: 'validation_failed', message: 'x', kind: 'value' }).body).toMatchObject({ status: '422', scimType: 'invalidValue' });
    const large = kit('/scim/v2/Users', { code: 'invalid_request', message: 'The JSON body is larger than 1mb.', kind: 'too_large' });
    expect(large.status).toBe(413);
    expect(large.body).toEqual({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '413', detail: 'The JSON body is larger than 1mb.' });
  });

  it('a body in a coding or charset not taken is 415 with no keyword (REST: its table’s 400); /Me is 501 with no keyword', () => {
    const unsupported = { code: 'invalid_request', message: 'Content-Encoding "compress" is not supported.', kind: 'unsupported_media' } as const;
    expect(kit('/scim/v2/Users', unsupported)).toMatchObject({
      status: 415,
      body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '415', detail: unsupported.message },
    });
    expect(kit('/scim/v2/Users', unsupported).body).not.toHaveProperty('scimType');
    expect(kit('/v1/groups', unsupported)).toMatchObject({ status: 400, body: { error: { code: 'invalid_request', message: unsupported.message } } });
    expect(answer(new ScimNotImplemented('No /Me.'))).toEqual({
      status: 501,
      type: 'application/scim+json; charset=utf-8',
      headers: {},
      body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '501', detail: 'No /Me.' },
    });
  });

  it("answers under /scim/ in any letter case, status as a string; elsewhere the contract's envelope", () => {
    expect(kit('/SCIM/v2/Users/1', { code: 'not_found', message: 'No such user.' })).toEqual({
      status: 404,
      type: 'application/scim+json; charset=utf-8',
      headers: {},
      body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404', detail: 'No such user.' },
    });
    expect(rawErrorBody('/v1/me', 408, 'invalid_request', 'slow')).toEqual({
      type: 'application/json; charset=utf-8',
      body: JSON.stringify({ error: { code: 'invalid_request', message: 'slow' } }),
    });
    expect(SCIM_ERRORS.owns('/scimx/v2')).toBe(false);
    expect(SCIM_ERRORS.jsonMediaTypes).toEqual(['application/scim+json']);
  });

  it("what is written outside express (Node's refusals, a cut body) is RFC 7644's body under /scim/, any letter case", () => {
    for (const path of ['/scim/v2/Users', '/SCIM/v2/Groups/1']) {
      const { type, body } = rawErrorBody(path, 408, 'invalid_request', 'The request body stopped arriving.');
      expect(type).toBe('application/scim+json; charset=utf-8');
      expect(JSON.parse(body)).toEqual({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
        status: '408',
        detail: 'The request body stopped arriving.',
      });
    }
  });
});
