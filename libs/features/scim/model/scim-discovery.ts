import { SCIM_MAX_RESULTS } from './scim-caller';
import type { ScimJson } from './scim-patch';
import { describeSchema, ENTERPRISE_SCHEMA, GROUP_RESOURCE, GROUP_SCHEMA, ResourceDef, SCIM_URN, USER_RESOURCE, USER_SCHEMA } from './scim-schemas';

const base = (baseUrl: string) => `${baseUrl}/scim/v2`;

/**
 * RFC 7643 §5, as this service really is: PATCH yes; filters yes (eq on the attributes listed in
 * docs/scim.md, joined by and; at most SCIM_MAX_RESULTS per page); no bulk, no sorting (answers are
 * ordered by id), no ETags, no password changes; the bearer key as the only scheme.
 */
export function scimServiceProviderConfig(baseUrl: string): ScimJson {
  return {
    schemas: [SCIM_URN.serviceProviderConfig],
    documentationUri: `${baseUrl}/v1/openapi.json`,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: SCIM_MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer key',
        description: 'The connection\'s API key ("svc_" and 64 lowercase hex characters) in "Authorization: Bearer <key>", as on the REST interface.',
        specUri: 'https://www.rfc-editor.org/rfc/rfc6750',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base(baseUrl)}/ServiceProviderConfig` },
  };
}

function resourceType(def: ResourceDef, baseUrl: string): ScimJson {
  return {
    schemas: [SCIM_URN.resourceType],
    id: def.name,
    name: def.name,
    endpoint: def.endpoint,
    description: def.core.description,
    schema: def.core.id,
    ...(def.extensions.length > 0 ? { schemaExtensions: def.extensions.map((e) => ({ schema: e.id, required: false })) } : {}),
    meta: { resourceType: 'ResourceType', location: `${base(baseUrl)}/ResourceTypes/${def.name}` },
  };
}

export const scimResourceTypes = (baseUrl: string): ScimJson[] => [USER_RESOURCE, GROUP_RESOURCE].map((d) => resourceType(d, baseUrl));

export const scimSchemas = (baseUrl: string): ScimJson[] =>
  [USER_SCHEMA, GROUP_SCHEMA, ENTERPRISE_SCHEMA].map((s) => describeSchema(s, `${base(baseUrl)}/Schemas/${s.id}`));
