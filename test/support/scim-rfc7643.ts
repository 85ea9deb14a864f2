/**
 * RFC 7643's rules for the discovery answers (§5 ServiceProviderConfig, §6 ResourceType, §7
 * Schema), written from the RFC: each function answers the problems it finds (empty when the
 * answer conforms), so a failing test names every one.
 */

type Json = Record<string, unknown>;

export const URN = {
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  enterprise: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
};

/** §2.3: the data types. */
const TYPES = ['string', 'boolean', 'decimal', 'integer', 'dateTime', 'binary', 'reference', 'complex'];
const MUTABILITY = ['readOnly', 'readWrite', 'immutable', 'writeOnly'];
const RETURNED = ['always', 'never', 'default', 'request'];
const UNIQUENESS = ['none', 'server', 'global'];
/** §7: the characteristics an attribute definition has (the optional ones last). */
const REQUIRED_CHARACTERISTICS = ['name', 'type', 'multiValued', 'description', 'required', 'caseExact', 'mutability', 'returned', 'uniqueness'];
const OPTIONAL_CHARACTERISTICS = ['canonicalValues', 'referenceTypes', 'subAttributes'];
/** §2.1 ATTRNAME = ALPHA *(nameChar); `$ref` is the name §2.4 gives a reference sub-attribute. */
const ATTRNAME = /^[A-Za-z][A-Za-z0-9_-]*$/;
/** §5: the authentication scheme types. */
const AUTH_TYPES = ['oauth', 'oauth2', 'oauthbearertoken', 'httpbasic', 'httpdigest'];

/**
 * The types (and, for references, the referenceTypes) RFC 7643 §4 and §8.7.1 give the attributes
 * it defines, by schema and dotted path: a service may leave an attribute out, not change its type.
 */
const RFC_TYPES: Record<string, Record<string, string | [string, string[]]>> = {
  [URN.user]: {
    userName: 'string',
    name: 'complex',
    'name.formatted': 'string',
    'name.familyName': 'string',
    'name.givenName': 'string',
    'name.middleName': 'string',
    'name.honorificPrefix': 'string',
    'name.honorificSuffix': 'string',
    displayName: 'string',
    nickName: 'string',
    profileUrl: ['reference', ['external']],
    title: 'string',
    userType: 'string',
    preferredLanguage: 'string',
    locale: 'string',
    timezone: 'string',
    active: 'boolean',
    password: 'string',
    externalId: 'string',
    ...multi('emails', 'string'),
    ...multi('phoneNumbers', 'string'),
    ...multi('ims', 'string'),
    ...multi('photos', ['reference', ['external']]),
    ...multi('entitlements', 'string'),
    ...multi('roles', 'string'),
    ...multi('x509Certificates', 'binary'),
    addresses: 'complex',
    'addresses.formatted': 'string',
    'addresses.streetAddress': 'string',
    'addresses.locality': 'string',
    'addresses.region': 'string',
    'addresses.postalCode': 'string',
    'addresses.country': 'string',
    'addresses.type': 'string',
    'addresses.primary': 'boolean',
    groups: 'complex',
    'groups.value': 'string',
    'groups.$ref': ['reference', ['User', 'Group']],
    'groups.display': 'string',
    'groups.type': 'string',
  },
  [URN.group]: {
    displayName: 'string',
    externalId: 'string',
    members: 'complex',
    'members.value': 'string',
    'members.$ref': ['reference', ['User', 'Group']],
    'members.display': 'string',
    'members.type': 'string',
  },
  [URN.enterprise]: {
    employeeNumber: 'string',
    costCenter: 'string',
    organization: 'string',
    division: 'string',
    department: 'string',
    manager: 'complex',
    'manager.value': 'string',
    'manager.$ref': ['reference', ['User']],
    'manager.displayName': 'string',
  },
};

function multi(name: string, valueType: string | [string, string[]]): Record<string, string | [string, string[]]> {
  return {
    [name]: 'complex',
    [`${name}.value`]: valueType,
    [`${name}.display`]: 'string',
    [`${name}.type`]: 'string',
    [`${name}.primary`]: 'boolean',
  };
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string' && s !== '');
const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
const isUri = (v: unknown): boolean => typeof v === 'string' && /^[a-z][a-z0-9+.-]*:\S+$/i.test(v);

function unknownKeys(where: string, o: Json, allowed: string[]): string[] {
  return Object.keys(o)
    .filter((k) => !allowed.includes(k))
    .map((k) => `${where}: "${k}" is not a characteristic RFC 7643 defines here`);
}

function metaProblems(where: string, meta: unknown, resourceType: string, location: string): string[] {
  if (!isObject(meta)) return [`${where}: meta must be an object`];
  const out: string[] = [];
  if (meta.resourceType !== resourceType) out.push(`${where}: meta.resourceType must be "${resourceType}"`);
  if (meta.location !== location) out.push(`${where}: meta.location must be ${location}, is ${String(meta.location)}`);
  return out;
}

/**
 * §7's rules for one attribute definition (and its sub-attributes): every characteristic present
 * with a value from its list; referenceTypes exactly on references, naming resource types the
 * service has, `external` or `uri`; subAttributes exactly on complex attributes, themselves not
 * complex (§2.3.8); and the type RFC 7643 gives the attribute where it defines one.
 */
export function attributeProblems(
  where: string,
  a: unknown,
  ctx: { resourceTypes: string[]; rfc: Record<string, string | [string, string[]]>; parent?: string },
): string[] {
  if (!isObject(a)) return [`${where}: must be an object`];
  const name = typeof a.name === 'string' ? a.name : '?';
  const path = ctx.parent ? `${ctx.parent}.${name}` : name;
  const at = `${where} (${path})`;
  const out: string[] = [];
  for (const k of REQUIRED_CHARACTERISTICS) if (!(k in a)) out.push(`${at}: "${k}" is missing`);
  out.push(...unknownKeys(at, a, [...REQUIRED_CHARACTERISTICS, ...OPTIONAL_CHARACTERISTICS]));
  const refName = ctx.parent !== undefined && a.name === '$ref';
  if (typeof a.name !== 'string' || !(ATTRNAME.test(a.name) || refName)) out.push(`${at}: name must be an ATTRNAME`);
  if (!TYPES.includes(a.type as string)) out.push(`${at}: type "${String(a.type)}" is not one of RFC 7643's types`);
  for (const k of ['multiValued', 'required', 'caseExact']) if (k in a && typeof a[k] !== 'boolean') out.push(`${at}: ${k} must be a boolean`);
  if ('description' in a && !isNonEmptyString(a.description)) out.push(`${at}: description must be a non-empty string`);
  if ('mutability' in a && !MUTABILITY.includes(a.mutability as string))
    out.push(`${at}: mutability "${String(a.mutability)}" is not one of ${MUTABILITY.join(', ')}`);
  if ('returned' in a && !RETURNED.includes(a.returned as string)) out.push(`${at}: returned "${String(a.returned)}" is not one of ${RETURNED.join(', ')}`);
  if ('uniqueness' in a && !UNIQUENESS.includes(a.uniqueness as string))
    out.push(`${at}: uniqueness "${String(a.uniqueness)}" is not one of ${UNIQUENESS.join(', ')}`);
  if ('canonicalValues' in a && !isStringList(a.canonicalValues)) out.push(`${at}: canonicalValues must be a non-empty array of strings`);
  if (refName && a.type !== 'reference') out.push(`${at}: $ref must be of type reference`);
  if (a.type === 'reference') {
    if (!isStringList(a.referenceTypes)) out.push(`${at}: a reference must carry referenceTypes (a non-empty array of strings)`);
    else
      for (const r of a.referenceTypes)
        if (!ctx.resourceTypes.includes(r) && r !== 'external' && r !== 'uri')
          out.push(`${at}: referenceTypes "${r}" is neither a resource type of the service, "external" nor "uri"`);
  } else if ('referenceTypes' in a) out.push(`${at}: referenceTypes belongs to references only`);
  if (a.type === 'complex') {
    if (!Array.isArray(a.subAttributes) || a.subAttributes.length === 0) out.push(`${at}: a complex attribute must carry subAttributes`);
    else {
      if (ctx.parent !== undefined) out.push(`${at}: a sub-attribute must not be complex (RFC 7643 §2.3.8)`);
      out.push(...duplicateNames(at, a.subAttributes));
      a.subAttributes.forEach((s, i) => out.push(...attributeProblems(`${where}.subAttributes[${i}]`, s, { ...ctx, parent: path })));
    }
  } else if ('subAttributes' in a) out.push(`${at}: subAttributes belongs to complex attributes only`);
  const rfc = ctx.rfc[path];
  if (rfc !== undefined) {
    const [type, refs] = Array.isArray(rfc) ? rfc : [rfc, undefined];
    if (a.type !== type) out.push(`${at}: RFC 7643 defines it as ${type}, not ${String(a.type)}`);
    if (refs && isStringList(a.referenceTypes))
      for (const r of a.referenceTypes) if (!refs.includes(r)) out.push(`${at}: RFC 7643 lets it reference ${refs.join(', ')}, not ${r}`);
  }
  return out;
}

function duplicateNames(where: string, list: unknown[]): string[] {
  const names = list.map((a) => (isObject(a) && typeof a.name === 'string' ? a.name.toLowerCase() : ''));
  return names.filter((n, i) => names.indexOf(n) !== i).map((n) => `${where}: the name "${n}" is defined twice`);
}

/** §7: a schema resource. */
export function schemaProblems(s: unknown, ctx: { base: string; resourceTypes: string[] }): string[] {
  if (!isObject(s)) return ['a schema must be an object'];
  const where = `schema ${String(s.id)}`;
  const out: string[] = [];
  if (JSON.stringify(s.schemas) !== JSON.stringify([URN.schema])) out.push(`${where}: schemas must be ["${URN.schema}"]`);
  if (!isUri(s.id)) out.push(`${where}: id must be a URI`);
  if (!isNonEmptyString(s.name)) out.push(`${where}: name must be a non-empty string`);
  if ('description' in s && !isNonEmptyString(s.description)) out.push(`${where}: description must be a non-empty string`);
  out.push(...unknownKeys(where, s, ['schemas', 'id', 'name', 'description', 'attributes', 'meta']));
  if (!Array.isArray(s.attributes) || s.attributes.length === 0) return [...out, `${where}: attributes must be a non-empty array`];
  out.push(...duplicateNames(where, s.attributes));
  const rfc = RFC_TYPES[s.id as string] ?? {};
  s.attributes.forEach((a, i) => out.push(...attributeProblems(`${where} attributes[${i}]`, a, { resourceTypes: ctx.resourceTypes, rfc })));
  out.push(...metaProblems(where, s.meta, 'Schema', `${ctx.base}/Schemas/${String(s.id)}`));
  return out;
}

/** §6: a resource type, whose schema and extensions must be schemas the service describes. */
export function resourceTypeProblems(r: unknown, ctx: { base: string; schemaIds: string[] }): string[] {
  if (!isObject(r)) return ['a resource type must be an object'];
  const where = `resource type ${String(r.name)}`;
  const out: string[] = [];
  if (JSON.stringify(r.schemas) !== JSON.stringify([URN.resourceType])) out.push(`${where}: schemas must be ["${URN.resourceType}"]`);
  out.push(...unknownKeys(where, r, ['schemas', 'id', 'name', 'description', 'endpoint', 'schema', 'schemaExtensions', 'meta']));
  if ('id' in r && !isNonEmptyString(r.id)) out.push(`${where}: id must be a non-empty string`);
  if (!isNonEmptyString(r.name)) out.push(`${where}: name is required`);
  if ('description' in r && !isNonEmptyString(r.description)) out.push(`${where}: description must be a non-empty string`);
  if (typeof r.endpoint !== 'string' || !/^\/[A-Za-z]/.test(r.endpoint)) out.push(`${where}: endpoint must be a URI relative to the base URL`);
  if (!isUri(r.schema) || !ctx.schemaIds.includes(r.schema as string)) out.push(`${where}: schema must be the URI of a schema the service describes`);
  if ('schemaExtensions' in r) {
    if (!Array.isArray(r.schemaExtensions) || r.schemaExtensions.length === 0) out.push(`${where}: schemaExtensions must be a non-empty array`);
    else
      r.schemaExtensions.forEach((e, i) => {
        const at = `${where} schemaExtensions[${i}]`;
        if (!isObject(e)) return out.push(`${at}: must be an object`);
        out.push(...unknownKeys(at, e, ['schema', 'required']));
        if (!ctx.schemaIds.includes(e.schema as string)) out.push(`${at}: schema must be the URI of a schema the service describes`);
        if (typeof e.required !== 'boolean') out.push(`${at}: required must be a boolean`);
      });
  }
  out.push(...metaProblems(where, r.meta, 'ResourceType', `${ctx.base}/ResourceTypes/${String(r.id ?? r.name)}`));
  return out;
}

/** §5: the service provider configuration. */
export function serviceProviderConfigProblems(c: unknown, ctx: { base: string }): string[] {
  if (!isObject(c)) return ['the configuration must be an object'];
  const where = 'ServiceProviderConfig';
  const out: string[] = [];
  if (JSON.stringify(c.schemas) !== JSON.stringify([URN.serviceProviderConfig])) out.push(`${where}: schemas must be ["${URN.serviceProviderConfig}"]`);
  out.push(
    ...unknownKeys(where, c, ['schemas', 'documentationUri', 'patch', 'bulk', 'filter', 'changePassword', 'sort', 'etag', 'authenticationSchemes', 'meta']),
  );
  if ('documentationUri' in c && !isUri(c.documentationUri)) out.push(`${where}: documentationUri must be a URI`);
  const feature = (name: string, integers: string[] = []) => {
    const f = c[name];
    if (!isObject(f)) return out.push(`${where}: ${name} is required (an object)`);
    out.push(...unknownKeys(`${where}.${name}`, f, ['supported', ...integers]));
    if (typeof f.supported !== 'boolean') out.push(`${where}: ${name}.supported must be a boolean`);
    for (const k of integers) if (!Number.isInteger(f[k]) || (f[k] as number) < 0) out.push(`${where}: ${name}.${k} must be a non-negative integer`);
  };
  feature('patch');
  feature('bulk', ['maxOperations', 'maxPayloadSize']);
  feature('filter', ['maxResults']);
  feature('changePassword');
  feature('sort');
  feature('etag');
  if (!Array.isArray(c.authenticationSchemes) || c.authenticationSchemes.length === 0) out.push(`${where}: authenticationSchemes must be a non-empty array`);
  else
    c.authenticationSchemes.forEach((s, i) => {
      const at = `${where}.authenticationSchemes[${i}]`;
      if (!isObject(s)) return out.push(`${at}: must be an object`);
      out.push(...unknownKeys(at, s, ['type', 'name', 'description', 'specUri', 'documentationUri', 'primary']));
      if (!AUTH_TYPES.includes(s.type as string)) out.push(`${at}: type must be one of ${AUTH_TYPES.join(', ')}`);
      if (!isNonEmptyString(s.name)) out.push(`${at}: name is required`);
      if (!isNonEmptyString(s.description)) out.push(`${at}: description is required`);
      for (const k of ['specUri', 'documentationUri']) if (k in s && !isUri(s[k])) out.push(`${at}: ${k} must be a URI`);
      if ('primary' in s && typeof s.primary !== 'boolean') out.push(`${at}: primary must be a boolean`);
    });
  out.push(...metaProblems(where, c.meta, 'ServiceProviderConfig', `${ctx.base}/ServiceProviderConfig`));
  return out;
}
