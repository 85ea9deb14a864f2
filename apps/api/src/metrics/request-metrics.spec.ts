import { scimOperation } from './request-metrics';

describe('scimOperation', () => {
  it.each([
    ['/scim/v2/Users', 'GET', 'Users', 'list'],
    ['/scim/v2/Users', 'POST', 'Users', 'create'],
    ['/scim/v2/Users/:id', 'GET', 'Users', 'get'],
    ['/scim/v2/Users/:id', 'PUT', 'Users', 'replace'],
    ['/scim/v2/Groups/:id', 'PATCH', 'Groups', 'patch'],
    ['/scim/v2/Groups/:id', 'DELETE', 'Groups', 'delete'],
    ['/scim/v2/Groups', 'DELETE', 'Groups', 'other'],
    ['/scim/v2/ServiceProviderConfig', 'GET', 'discovery', 'list'],
    ['/scim/v2/Schemas/:id', 'GET', 'discovery', 'get'],
  ])('%s %s → %s %s', (route, method, resource, operation) => {
    expect(scimOperation(route, method)).toEqual({ resource, operation });
  });

  it('answers nothing outside /scim/v2/', () => {
    expect(scimOperation('/v1/users', 'GET')).toBeUndefined();
    expect(scimOperation('unmatched', 'GET')).toBeUndefined();
  });
});
