import { DomainError } from '@kernel/core';
import { ScimError } from '../model/scim-error';
import { listResponse, readListQuery, readSearchRequest, SCIM_MAX_START_INDEX } from './scim-query';

describe('readListQuery', () => {
  it("reads Okta's lookup query", () => {
    expect(readListQuery({ filter: 'userName eq "a@b.example"', startIndex: '1', count: '100' })).toEqual({
      filter: 'userName eq "a@b.example"',
      page: { startIndex: 1, count: 100 },
      projection: { attributes: undefined, excludedAttributes: undefined },
    });
  });

  it('defaults, bounds and RFC 7644 §3.4.2.4 corrections: startIndex below 1 is 1, count below 0 is 0, above the maximum the maximum', () => {
    expect(readListQuery({}).page).toEqual({ startIndex: 1, count: 100 });
    expect(readListQuery({ startIndex: '-3', count: '-1' }).page).toEqual({ startIndex: 1, count: 0 });
    expect(readListQuery({ count: '100000' }).page.count).toBe(1000);
    expect(readListQuery({ startindex: '7', COUNT: '2' }).page).toEqual({ startIndex: 7, count: 2 });
  });

  it('reads the projection, and ignores sortBy (sorting is not supported)', () => {
    expect(readListQuery({ excludedAttributes: 'members', sortBy: 'userName' }).projection).toEqual({ attributes: undefined, excludedAttributes: ['members'] });
  });

  it('caps an integer of any length (10 digits and more) instead of refusing it', () => {
    expect(readListQuery({ count: '9999999999' }).page.count).toBe(1000);
    expect(readListQuery({ count: '99999999999999999999999999' }).page.count).toBe(1000);
    expect(readListQuery({ count: '-99999999999999999999' }).page.count).toBe(0);
    expect(readListQuery({ startIndex: '1000000000' }).page.startIndex).toBe(1_000_000_000);
    expect(readListQuery({ startIndex: '99999999999' }).page.startIndex).toBe(SCIM_MAX_START_INDEX);
    expect(readListQuery({ startIndex: '123456789012345678901234567890' }).page.startIndex).toBe(SCIM_MAX_START_INDEX);
    expect(readListQuery({ startIndex: '-123456789012345678901234567890' }).page.startIndex).toBe(1);
    expect(readListQuery({ startIndex: ' 0012 ' }).page.startIndex).toBe(12);
  });

  it('refuses a non-integer paging parameter (400) and two filters (400 invalidFilter)', () => {
    for (const bad of ['ten', '1.5', '1e3', '0x10', '+5', '--1', '1 2', '']) {
      if (bad !== '') expect(() => readListQuery({ count: bad })).toThrow(DomainError);
      expect(() => readListQuery({ startIndex: `${bad}x` })).toThrow(DomainError);
    }
    expect(() => readListQuery({ count: 'ten' })).toThrow(DomainError);
    expect(() => readListQuery({ filter: ['a', 'b'] })).toThrow(ScimError);
  });
});

describe('readSearchRequest', () => {
  const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

  it('reads RFC 7644 §3.4.3’s body as the GET’s query: lists of attributes, JSON integers, sortBy ignored', () => {
    expect(
      readSearchRequest({
        schemas: [SEARCH],
        attributes: ['userName', 'name.givenName'],
        excludedAttributes: ['emails'],
        filter: 'userName eq "a@b.example"',
        sortBy: 'userName',
        sortOrder: 'descending',
        startIndex: 3,
        count: 10,
      }),
    ).toEqual({
      filter: 'userName eq "a@b.example"',
      page: { startIndex: 3, count: 10 },
      projection: { attributes: ['userName', 'name.givenName'], excludedAttributes: ['emails'] },
    });
  });

  it('defaults and corrections as on GET; member names in any case; null is absent; a comma-separated string is taken', () => {
    expect(readSearchRequest({ schemas: [SEARCH.toLowerCase()] })).toEqual(readListQuery({}));
    expect(readSearchRequest({ SCHEMAS: [SEARCH], STARTINDEX: -4, Count: 1e21, filter: null, attributes: 'userName, title' })).toEqual({
      filter: undefined,
      page: { startIndex: 1, count: 1000 },
      projection: { attributes: ['userName', 'title'], excludedAttributes: undefined },
    });
    expect(readSearchRequest({ schemas: [SEARCH], startIndex: '99999999999', count: '0' }).page).toEqual({ startIndex: SCIM_MAX_START_INDEX, count: 0 });
  });

  it('refuses what is not a SearchRequest (400 invalidSyntax), a filter that is not a string (invalidFilter), a count that is not an integer (400)', () => {
    const type = (body: unknown) => {
      try {
        readSearchRequest(body);
      } catch (err) {
        return err instanceof ScimError ? err.scimType : (err as DomainError).code;
      }
      return 'taken';
    };
    expect(type([])).toBe('invalidSyntax');
    expect(type({ filter: 'userName eq "x"' })).toBe('invalidSyntax');
    expect(type({ schemas: [SEARCH], attributes: [1] })).toBe('invalidSyntax');
    expect(type({ schemas: [SEARCH], attributes: { a: 1 } })).toBe('invalidSyntax');
    expect(type({ schemas: [SEARCH], filter: ['a', 'b'] })).toBe('invalidFilter');
    expect(type({ schemas: [SEARCH], count: 1.5 })).toBe('invalid_request');
    expect(type({ schemas: [SEARCH], startIndex: true })).toBe('invalid_request');
    expect(type({ schemas: [SEARCH], count: 'ten' })).toBe('invalid_request');
  });
});

describe('listResponse', () => {
  it('is the RFC 7644 ListResponse, itemsPerPage the page and totalResults every match', () => {
    expect(listResponse({ totalResults: 12, startIndex: 11, items: [{ id: '1' }, { id: '2' }] }, (r) => ({ ...r, x: 1 }))).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 12,
      startIndex: 11,
      itemsPerPage: 2,
      Resources: [
        { id: '1', x: 1 },
        { id: '2', x: 1 },
      ],
    });
  });
});
