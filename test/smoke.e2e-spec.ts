import { makeTenant, useApi } from './support/api';

describe('smoke', () => {
  const { api } = useApi();

  it('GET /v1/me', async () => {
    const t = await makeTenant(api.app);
    const res = await api.http().get('/v1/me').set(t.auth);
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(t.connectionId);
  });
});
