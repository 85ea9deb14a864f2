import express from 'express';
import { RouteTable } from './route-table';

describe('RouteTable.templateOf', () => {
  const app = express();
  const ok = (_req: unknown, res: express.Response) => void res.end();
  app.get('/v1/users/me', ok);
  app.get('/v1/users/:id', ok);
  app.delete('/v1/webhooks/:id', ok);
  app.post('/v1/webhooks/:id/test', ok);
  app.get('/scim/v2/Users', ok);
  const routes = new RouteTable();
  routes.loadFrom(app);

  it('answers the template that serves a path, in the order express matches', () => {
    expect(routes.templateOf('/v1/users/me', 'GET')).toBe('/v1/users/me');
    expect(routes.templateOf('/v1/users/123', 'GET')).toBe('/v1/users/:id');
    expect(routes.templateOf('/v1/webhooks/9/test', 'POST')).toBe('/v1/webhooks/:id/test');
    expect(routes.templateOf('/v1/users/123/', 'HEAD')).toBe('/v1/users/:id');
  });

  it('a known path with another method still has its template; SCIM in any letter case', () => {
    expect(routes.templateOf('/v1/webhooks/9', 'GET')).toBe('/v1/webhooks/:id');
    expect(routes.templateOf('/SCIM/v2/users', 'GET')).toBe('/scim/v2/Users');
  });

  it('a path no route serves has none', () => {
    expect(routes.templateOf('/v1/nothing/here', 'GET')).toBeUndefined();
  });
});
