import { Scope, SCOPES } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { DomainsService } from '@features/organisations';
import { makeTenant, Tenant, TestApi } from './api';

export type Res = { status: number; body: any; text: string; headers: Record<string, string> };
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export const SCIM = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  enterprise: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patchOp: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
};

export const patchOp = (...Operations: unknown[]) => ({ schemas: [SCIM.patchOp], Operations });
export const rand = () => Math.random().toString(36).slice(2, 10);

export interface ScimTenant extends Tenant {
  /** A verified domain of the organisation: addresses on it are created, others invited. */
  domain: string;
}

export async function scimTenant(api: TestApi, scopes: readonly Scope[] = SCOPES): Promise<ScimTenant> {
  const t = await makeTenant(api.app, scopes);
  const domain = `d${rand()}.example`;
  await new DomainsService(api.app.get(TransactionHost)).add(t.organisationId, domain);
  return { ...t, domain };
}

/** A SCIM call as a connector makes it: the key, JSON sent as application/scim+json. */
export function scim(api: TestApi, t: Tenant, method: Method, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
  let req = api.http()[method](`/scim/v2${path}`).set(t.auth).set(headers);
  if (body !== undefined) req = req.set('Content-Type', 'application/scim+json').send(typeof body === 'string' ? body : JSON.stringify(body));
  return req as unknown as Promise<Res>;
}

/** An RFC 7644 §3.12 error answer, application/scim+json. */
export function expectScimError(res: Res, status: number, scimType?: string): void {
  expect({ status: res.status, type: res.headers['content-type'] }).toEqual({ status, type: expect.stringMatching(/^application\/scim\+json/) });
  expect(res.body).toEqual({ schemas: [SCIM.error], status: String(status), ...(scimType ? { scimType } : {}), detail: expect.any(String) });
}

/** Okta's create body, as its SCIM 2.0 test suite and provisioning send it. */
export const oktaUser = (email: string, externalId = `00u${rand()}`) => ({
  schemas: [SCIM.user],
  userName: email,
  name: { givenName: 'Test', familyName: 'User' },
  emails: [{ primary: true, value: email, type: 'work' }],
  displayName: 'Test User',
  locale: 'en-US',
  externalId,
  groups: [],
  password: '1mz050nq',
  active: true,
});

/** Entra ID's create body (non-gallery app, default attribute mappings). */
export const entraUser = (email: string, externalId = rand()) => ({
  schemas: [SCIM.user, SCIM.enterprise],
  externalId,
  userName: email,
  active: true,
  addresses: [
    { primary: true, type: 'work', streetAddress: '1 Main St', locality: 'Town', region: 'R', postalCode: '1', country: 'NL', formatted: '1 Main St' },
  ],
  displayName: 'Ana López',
  emails: [{ primary: true, type: 'work', value: email }],
  meta: { resourceType: 'User' },
  name: { formatted: 'Ana López', familyName: 'López', givenName: 'Ana' },
  phoneNumbers: [{ primary: true, type: 'work', value: '+31 20 000 0000' }],
  preferredLanguage: 'en-US',
  title: 'Nurse',
  [SCIM.enterprise]: { employeeNumber: '1001', department: 'Care' },
});
