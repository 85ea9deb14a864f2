import type { OpenApiPart } from '@web/openapi';
import { ID_SCHEMA_PATTERN } from '@web/http';
import { SCIM_DEFAULT_COUNT, SCIM_MAX_RESULTS } from '../model/scim-caller';
import { AttrDef, GROUP_RESOURCE, ResourceDef, SCIM_URN, USER_RESOURCE } from '../model/scim-schemas';
import { SCIM_MAX_START_INDEX } from './scim-query';

type Json = Record<string, unknown>;

/** SCIM's media type (RFC 7644 §3.1): every SCIM answer is sent as it; bodies may come as it or as application/json. */
const SCIM = 'application/scim+json';
const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const scimContent = (schema: Json): Json => ({ [SCIM]: { schema }, 'application/json': { schema } });
const answer = (description: string, schema: Json): Json => ({ description, content: { [SCIM]: { schema } } });

/**
 * An RFC 7643 attribute as JSON Schema. SCIM objects stay open (`additionalProperties: true`):
 * attribute names are case-insensitive and RFC attributes the service does not keep are accepted
 * and ignored, so a closed schema would refuse what the service takes.
 */
function attrSchema(a: AttrDef): Json {
  let one: Json;
  if (a.type === 'complex') {
    one = {
      type: 'object',
      additionalProperties: true,
      ...(a.subAttributes ? members(a.subAttributes) : {}),
    };
  } else if (a.type === 'boolean') one = { type: 'boolean' };
  else if (a.type === 'dateTime') one = { type: 'string', format: 'date-time' };
  else one = { type: 'string', ...(a.maxLength ? { maxLength: a.maxLength } : {}), ...(a.canonicalValues ? { examples: a.canonicalValues } : {}) };
  const described = { ...(a.multiValued ? { type: 'array', maxItems: 1000, items: one } : one), description: `${a.description} (${a.mutability})` };
  return a.name === 'id' ? { ...described, pattern: ID_SCHEMA_PATTERN } : described;
}

/**
 * The sub-attributes of a complex attribute as `properties`; SCIM's `$ref` (a member's or
 * manager's URI) as `patternProperties`, since OpenAPI tools read a `$ref` key anywhere as a
 * reference to resolve.
 */
function members(list: AttrDef[]): Json {
  const named = list.filter((s) => s.name !== '$ref');
  const ref = list.find((s) => s.name === '$ref');
  return {
    properties: Object.fromEntries(named.map((s) => [s.name, attrSchema(s)])),
    ...(ref ? { patternProperties: { '^\\$ref$': attrSchema(ref) } } : {}),
  };
}

function resourceSchema(r: ResourceDef): Json {
  const properties: Json = { schemas: { type: 'array', maxItems: 1000, items: { type: 'string' }, description: 'Schema URNs of the resource.' } };
  for (const a of [...r.common, ...r.core.attributes]) properties[a.name] = attrSchema(a);
  for (const ext of r.extensions) {
    properties[ext.id] = { type: 'object', additionalProperties: true, description: ext.description, ...members(ext.attributes) };
  }
  return { type: 'object', additionalProperties: true, description: r.core.description, required: ['schemas'], properties };
}

const LIST_PARAMETERS: Json[] = [
  {
    name: 'filter',
    in: 'query',
    required: false,
    description: "A SCIM filter (RFC 7644 §3.4.2.2); see the path's description for what is supported.",
    schema: { type: 'string', maxLength: 2048 },
  },
  {
    name: 'startIndex',
    in: 'query',
    required: false,
    description: '1-based index of the first result; below 1 means 1.',
    schema: { type: 'integer', minimum: 1, maximum: SCIM_MAX_START_INDEX, default: 1 },
  },
  {
    name: 'count',
    in: 'query',
    required: false,
    description: `Results per page (at most ${SCIM_MAX_RESULTS}; larger values mean ${SCIM_MAX_RESULTS}).`,
    schema: { type: 'integer', minimum: 0, maximum: SCIM_MAX_RESULTS, default: SCIM_DEFAULT_COUNT },
  },
];
const PROJECTION: Json[] = [
  {
    name: 'attributes',
    in: 'query',
    required: false,
    description: 'Comma-separated attributes to answer (RFC 7644 §3.4.2.5).',
    schema: { type: 'string', maxLength: 2048 },
  },
  {
    name: 'excludedAttributes',
    in: 'query',
    required: false,
    description: 'Comma-separated attributes to leave out (RFC 7644 §3.4.2.5).',
    schema: { type: 'string', maxLength: 2048 },
  },
];
const ID_PARAM: Json = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'Id of the resource, a string of digits.',
  schema: { type: 'string', pattern: ID_SCHEMA_PATTERN },
};

const FILTERS: Record<ResourceDef['name'], string> = {
  User: '`userName eq "…"`, `externalId eq "…"`, `emails[value eq "…"]` and `emails.value eq "…"`, joined by `and`/`or`',
  Group: '`displayName eq "…"`, `externalId eq "…"`',
};

/** The seven operations on one resource type (list, search, create, read, replace, patch, delete). */
function resourcePaths(r: ResourceDef, read: string, write: string, writeNote: string): Record<string, Json> {
  const base = `/scim/v2${r.endpoint}`;
  const tags = ['SCIM'];
  const plural = `${r.name}s`;
  const one = ref(`Scim${r.name}`);
  return {
    [base]: {
      get: {
        operationId: `scimList${plural}`,
        summary: `List ${plural} (SCIM)`,
        description: `RFC 7644 §3.4.2. Filters: ${FILTERS[r.name]}. Ordered by id; \`sortBy\` is ignored. Scope \`${read}\`.`,
        tags,
        parameters: [...LIST_PARAMETERS, ...PROJECTION],
        responses: { '200': answer(`A ListResponse of ${plural}.`, ref(`Scim${r.name}List`)) },
      },
      post: {
        operationId: `scimCreate${r.name}`,
        summary: `Create a ${r.name} (SCIM)`,
        description: `RFC 7644 §3.3. ${writeNote} Scope \`${write}\`.`,
        tags,
        parameters: PROJECTION,
        requestBody: { required: true, content: scimContent(one) },
        responses: {
          '201': {
            ...answer(`The ${r.name} created; \`Location\` is its address.`, one),
            headers: { Location: { description: 'Address of the resource.', schema: { type: 'string', format: 'uri' } } },
          },
        },
      },
    },
    [`${base}/.search`]: {
      post: {
        operationId: `scimSearch${plural}`,
        summary: `Search ${plural} (SCIM)`,
        description: `RFC 7644 §3.4.3: the list's query as a SearchRequest body, answered as the GET is. Scope \`${read}\`.`,
        tags,
        requestBody: { required: true, content: scimContent(ref('ScimSearchRequest')) },
        responses: { '200': answer(`A ListResponse of ${plural}.`, ref(`Scim${r.name}List`)) },
      },
    },
    [`${base}/{id}`]: {
      get: {
        operationId: `scimGet${r.name}`,
        summary: `Get a ${r.name} (SCIM)`,
        description: `RFC 7644 §3.4.1. Scope \`${read}\`.`,
        tags,
        parameters: [ID_PARAM, ...PROJECTION],
        responses: { '200': answer(`The ${r.name}.`, one) },
      },
      put: {
        operationId: `scimReplace${r.name}`,
        summary: `Replace a ${r.name} (SCIM)`,
        description: `RFC 7644 §3.5.1. ${writeNote} Scope \`${write}\`.`,
        tags,
        parameters: [ID_PARAM, ...PROJECTION],
        requestBody: { required: true, content: scimContent(one) },
        responses: { '200': answer(`The ${r.name} as replaced.`, one) },
      },
      patch: {
        operationId: `scimPatch${r.name}`,
        summary: `Patch a ${r.name} (SCIM)`,
        description: `RFC 7644 §3.5.2: all operations apply or none does. ${writeNote} Scope \`${write}\`.`,
        tags,
        parameters: [ID_PARAM, ...PROJECTION],
        requestBody: { required: true, content: scimContent(ref('ScimPatchOp')) },
        responses: { '200': answer(`The ${r.name} as patched.`, one) },
      },
      delete: {
        operationId: `scimDelete${r.name}`,
        summary: `Delete a ${r.name} (SCIM)`,
        description: `RFC 7644 §3.6. Scope \`${write}\`.`,
        tags,
        parameters: [ID_PARAM],
        responses: { '204': { description: 'Deleted.' } },
      },
    },
  };
}

const listOf = (items: Json): Json => ({
  type: 'object',
  additionalProperties: true,
  required: ['schemas', 'totalResults', 'Resources'],
  properties: {
    schemas: { type: 'array', maxItems: 1000, items: { type: 'string', const: SCIM_URN.listResponse } },
    totalResults: { type: 'integer', minimum: 0, description: 'Every match, not only this page.' },
    startIndex: { type: 'integer', minimum: 1 },
    itemsPerPage: { type: 'integer', minimum: 0 },
    Resources: { type: 'array', items },
  },
});

const discovery = (operationId: string, summary: string, schema: Json, parameters: Json[] = []): Json => ({
  get: {
    operationId,
    summary,
    description: 'RFC 7644 §4. Any valid key; no scope needed. Query parameters are ignored.',
    tags: ['SCIM'],
    parameters,
    responses: { '200': answer(summary, schema) },
  },
});
const anyScim: Json = {
  type: 'object',
  additionalProperties: true,
  required: ['schemas'],
  properties: { schemas: { type: 'array', maxItems: 1000, items: { type: 'string' } } },
};

/**
 * SCIM 2.0 (RFC 7643, RFC 7644) as OpenAPI: its controllers take and answer SCIM JSON that no DTO
 * describes, so this part is written from the same attribute definitions the service checks bodies
 * against (scim-schemas.ts). The front door adds the common error answers, in SCIM's error schema.
 */
export function scimOpenApiPart(): OpenApiPart {
  const members = 'Setting members also needs `users:write`.';
  return {
    tags: [
      { name: 'SCIM', description: 'SCIM 2.0 (RFC 7643, RFC 7644) under `/scim/v2/`, for identity providers. Bodies and answers are `application/scim+json`.' },
    ],
    paths: {
      ...resourcePaths(USER_RESOURCE, 'users:read', 'users:write', 'A User is a person of the organisation, or an invitation until it is accepted.'),
      ...resourcePaths(GROUP_RESOURCE, 'groups:read', 'groups:write', `A group starts with no permissions. ${members}`),
      '/scim/v2/ServiceProviderConfig': discovery('scimServiceProviderConfig', 'What this SCIM service supports.', ref('ScimServiceProviderConfig')),
      '/scim/v2/ResourceTypes': discovery('scimListResourceTypes', 'The resource types: User and Group.', listOf(anyScim)),
      '/scim/v2/ResourceTypes/{name}': discovery('scimGetResourceType', 'One resource type.', anyScim, [
        { name: 'name', in: 'path', required: true, schema: { type: 'string', maxLength: 100 }, description: '`User` or `Group`.' },
      ]),
      '/scim/v2/Schemas': discovery('scimListSchemas', 'The User, enterprise User and Group schemas as supported.', listOf(anyScim)),
      '/scim/v2/Schemas/{id}': discovery('scimGetSchema', 'One schema.', anyScim, [
        { name: 'id', in: 'path', required: true, schema: { type: 'string', maxLength: 200 }, description: 'The schema URN.' },
      ]),
    },
    schemas: {
      ScimUser: resourceSchema(USER_RESOURCE),
      ScimGroup: resourceSchema(GROUP_RESOURCE),
      ScimUserList: listOf(ref('ScimUser')),
      ScimGroupList: listOf(ref('ScimGroup')),
      ScimServiceProviderConfig: { ...anyScim, description: 'RFC 7643 §5; `documentationUri` is this document.' },
      ScimSearchRequest: {
        type: 'object',
        additionalProperties: true,
        required: ['schemas'],
        properties: {
          schemas: { type: 'array', maxItems: 1000, items: { type: 'string' }, description: `Must contain \`${SCIM_URN.searchRequest}\`.` },
          filter: { type: 'string', maxLength: 2048 },
          startIndex: { type: 'integer' },
          count: { type: 'integer' },
          attributes: { type: 'array', maxItems: 1000, items: { type: 'string' } },
          excludedAttributes: { type: 'array', maxItems: 1000, items: { type: 'string' } },
        },
      },
      ScimPatchOp: {
        type: 'object',
        additionalProperties: true,
        required: ['schemas', 'Operations'],
        properties: {
          schemas: { type: 'array', maxItems: 1000, items: { type: 'string' }, description: `Must contain \`${SCIM_URN.patchOp}\`.` },
          Operations: {
            type: 'array',
            maxItems: 1000,
            items: {
              type: 'object',
              additionalProperties: true,
              required: ['op'],
              properties: {
                op: { type: 'string', description: '`add`, `remove` or `replace` (any letter case).' },
                path: { type: 'string', maxLength: 2048 },
                value: { description: 'The value: any JSON.' },
              },
            },
          },
        },
      },
      ScimError: {
        type: 'object',
        additionalProperties: false,
        required: ['schemas', 'status', 'detail'],
        description: 'RFC 7644 §3.12: every error under `/scim/v2/`.',
        properties: {
          schemas: { type: 'array', items: { type: 'string', const: SCIM_URN.error } },
          status: { type: 'string', pattern: '^[1-5][0-9]{2}$', description: 'The HTTP status, as a string.' },
          scimType: {
            type: 'string',
            enum: ['invalidFilter', 'tooMany', 'uniqueness', 'mutability', 'invalidSyntax', 'invalidPath', 'noTarget', 'invalidValue'],
          },
          detail: { type: 'string' },
        },
      },
    },
  };
}
