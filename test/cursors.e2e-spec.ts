import { encodeCursor } from '@kernel/core';
import { DeliveryLogService } from '@features/webhooks';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { startApi, useApi } from './support/api';

const MESSAGE = 'cursor: is not a cursor this API issued; use next_cursor from a previous page.';
const LISTS = ['/v1/cases', '/v1/conversations', '/v1/groups', '/v1/users', '/v1/invitations', '/v1/webhooks'];
const b64 = (s: string) => Buffer.from(s).toString('base64url');

/**
 * Cursors are signed by the installation (HMAC-SHA256 with a secret Postgres made at migration):
 * one the api did not issue is 400 invalid_request before anything of it reaches a query, on
 * every REST list, and one issued by any replica is taken by every other.
 */
describe('list cursors', () => {
  const { api, t } = useApi({ tenant: true });

  const forged: Array<[string, string]> = [
    // Described as 1–200 characters: an empty one is refused like any other the api did not issue, not read as the first page.
    ['empty', ''],
    ['year 0000', b64('["0000-01-01T00:00:00.000Z","1"]')],
    ['a negative year', b64('["-000001-01-01T00:00:00.000Z","1"]')],
    ['year 10000', b64('["+010000-01-01T00:00:00.000Z","1"]')],
    ['a well-formed but unsigned position', b64('["2026-01-01T00:00:00.000Z","1"]')],
    ['a 32-hex id, unsigned', b64(`["2026-01-01T00:00:00.000Z","${'a'.repeat(32)}"]`)],
    ['a position signed with another key', encodeCursor({ createdAt: new Date('2026-01-01T00:00:00.000Z'), id: '1' }, randomBytes(64))],
    ['a far date signed with another key', encodeCursor({ createdAt: new Date(Date.UTC(10000, 0, 1)), id: '1' }, randomBytes(64))],
  ];

  describe.each(LISTS)('GET %s', (path) => {
    it.each(forged)('refuses a forged cursor (%s): 400 invalid_request', async (_, cursor) => {
      const res = await api.http().get(`${path}?cursor=${cursor}`).set(t.auth);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error: { code: 'invalid_request', message: MESSAGE } } });
    });
  });

  it('a tampered cursor the api issued is refused; the cursor itself pages on', async () => {
    for (const name of ['g1', 'g2', 'g3']) expect((await api.http().post('/v1/groups').set(t.auth).send({ name })).status).toBe(201);
    const first = await api.http().get('/v1/groups?limit=1').set(t.auth);
    const cursor: string = first.body.next_cursor;
    expect(cursor).toEqual(expect.any(String));
    expect((await api.http().get(`/v1/groups?limit=1&cursor=${cursor}`).set(t.auth)).status).toBe(200);
    const raw = Buffer.from(cursor, 'base64url');
    raw[raw.length - 3] ^= 0x01;
    const res = await api
      .http()
      .get(`/v1/groups?limit=1&cursor=${raw.toString('base64url')}`)
      .set(t.auth);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(MESSAGE);
  });

  it("a cursor issued by one replica is taken by another (the key is the database's, nothing to configure)", async () => {
    const other = await startApi();
    try {
      const first = await api.http().get('/v1/groups?limit=1').set(t.auth);
      const res = await other.http().get(`/v1/groups?limit=1&cursor=${first.body.next_cursor}`).set(t.auth);
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it("a webhook's delivery log (the admin CLI's list) refuses forged cursors too", async () => {
    const db = api.app.get(DataSource);
    const [hook] = await db.query(
      `INSERT INTO webhooks (organisation_id, connection_id, url, events, secret) VALUES ($1, $2, 'https://hooks.example.com/x', '{case.created}', 'whsec_x') RETURNING id`,
      [t.organisationId, t.connectionId],
    );
    const log = api.app.get(DeliveryLogService);
    for (const [, cursor] of forged) {
      await expect(log.list(String(hook.id), { cursor })).rejects.toMatchObject({ code: 'invalid_request', message: MESSAGE });
    }
  });
});
