import { useApi } from './support/api';

type Res = { status: number; body: any };

/** What a refused body says: a missing required field says it is required, once. */
describe('Validation messages', () => {
  const { api, t } = useApi({ tenant: true });

  const post = (path: string, body: object): Promise<Res> => api.http().post(path).set(t.auth).send(body) as unknown as Promise<Res>;
  const expect422 = (res: Res, message: string) =>
    expect({ status: res.status, code: res.body?.error?.code, message: res.body?.error?.message }).toEqual({ status: 422, code: 'validation_failed', message });

  it('a webhook body without events says `events: is required`, and nothing about the values it does not have', async () => {
    expect422(await post('/v1/webhooks', { url: 'https://hooks.example.com/x' }), 'events: is required');
    expect422(await post('/v1/webhooks', {}), 'url: is required; events: is required');
    // A field that is present but wrong still says what is wrong with it.
    const wrong = await post('/v1/webhooks', { url: 'https://hooks.example.com/x', events: [7] });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.message).toContain('events: each value must be a string');
    expect(wrong.body.error.message).not.toContain('is required');
  });

  it('so do other bodies: a case without external_ref, a group without name', async () => {
    expect422(await post('/v1/cases', { title: 'x' }), 'external_ref: is required');
    expect422(await post('/v1/groups', { permissions: [] }), 'name: is required');
  });

  it('null is a value, not a missing field: it is described as before', async () => {
    const res = await post('/v1/cases', { external_ref: null });
    expect(res.status).toBe(422);
    expect(res.body.error.message).not.toContain('is required');
    expect(res.body.error.message).toMatch(/^external_ref: /);
  });
});
