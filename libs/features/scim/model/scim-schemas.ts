/** Schema URNs of RFC 7643/7644 this service speaks. */
export const SCIM_URN = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  enterprise: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  listResponse: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patchOp: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  searchRequest: 'urn:ietf:params:scim:api:messages:2.0:SearchRequest',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

export type Mutability = 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';

/** An attribute as RFC 7643 §7 describes it, plus `maxLength`, which this service enforces. */
export interface AttrDef {
  name: string;
  type: 'string' | 'boolean' | 'complex' | 'reference' | 'dateTime';
  multiValued: boolean;
  description: string;
  required: boolean;
  caseExact: boolean;
  mutability: Mutability;
  returned: 'always' | 'default' | 'never' | 'request';
  uniqueness: 'none' | 'server' | 'global';
  subAttributes?: AttrDef[];
  canonicalValues?: string[];
  referenceTypes?: string[];
  /** Longest accepted string (characters); not part of RFC 7643's attribute description. */
  maxLength?: number;
  /** RFC-defined sub-attributes accepted and not kept. */
  ignoredSubAttributes?: string[];
}

export interface SchemaDef {
  id: string;
  name: string;
  description: string;
  attributes: AttrDef[];
  /** Attributes RFC 7643 defines for this schema that are accepted and not kept (never an error). */
  ignored: string[];
}

/** A resource type: its core schema, its extensions, and the common attributes (id, externalId, meta). */
export interface ResourceDef {
  name: 'User' | 'Group';
  endpoint: string;
  core: SchemaDef;
  extensions: SchemaDef[];
  common: AttrDef[];
}

const attr = (name: string, description: string, more: Partial<AttrDef> = {}): AttrDef => ({
  name,
  type: 'string',
  multiValued: false,
  description,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...more,
});

const ID = attr('id', 'Unique identifier of the resource, a string of digits, assigned by the service.', {
  caseExact: true,
  mutability: 'readOnly',
  returned: 'always',
  uniqueness: 'server',
});
const META = attr('meta', 'Resource metadata.', { type: 'complex', mutability: 'readOnly' });
const externalId = (what: string) =>
  attr('externalId', `Identifier of the ${what} in the provisioning client; unique in the organisation.`, {
    caseExact: true,
    uniqueness: 'server',
    maxLength: 255,
  });

const kept = (name: string, description: string, maxLength = 200, more: Partial<AttrDef> = {}) =>
  attr(name, `${description} Kept as sent; the platform does not use it.`, { maxLength, ...more });
/**
 * RFC 7643 §7: an attribute of type reference names what it may reference; a URL outside SCIM is
 * `external` (§8.7.1 declares profileUrl and photos.value so).
 */
const EXTERNAL_REFERENCE: Partial<AttrDef> = { type: 'reference', referenceTypes: ['external'] };
/** A multi-valued attribute of RFC 7643 §4.1.2 (value, display, type, primary), kept as sent. */
const keptList = (name: string, description: string, valueMaxLength = 200, valueMore: Partial<AttrDef> = {}) =>
  attr(name, `${description} Kept as sent (at most 20); the platform does not use them.`, {
    type: 'complex',
    multiValued: true,
    subAttributes: [
      attr('value', 'The value.', { maxLength: valueMaxLength, ...valueMore }),
      attr('display', 'A name for display.', { maxLength: 200 }),
      attr('type', 'A label, e.g. work.', { maxLength: 50 }),
      attr('primary', 'The primary value (at most one).', { type: 'boolean' }),
    ],
  });

/**
 * RFC 7643 §4.1 attributes the platform has no field for: kept beside the person (scim_users)
 * and answered as written, so what a client reads back is what it wrote.
 */
const KEPT_USER_ATTRIBUTES: AttrDef[] = [
  kept('nickName', 'The casual name.'),
  kept('profileUrl', 'A URL of the online profile.', 2048, EXTERNAL_REFERENCE),
  kept('userType', 'The relation to the organisation, e.g. Employee.'),
  kept('preferredLanguage', 'The preferred written or spoken language, e.g. en-US.', 50),
  kept('locale', 'The locale, e.g. en-US.', 50),
  kept('timezone', 'The time zone, e.g. Europe/Amsterdam.', 100),
  keptList('phoneNumbers', 'Phone numbers.'),
  keptList('ims', 'Instant messaging addresses.'),
  keptList('photos', 'URLs of photos.', 2048, EXTERNAL_REFERENCE),
  attr('addresses', 'Physical addresses. Kept as sent (at most 20); the platform does not use them.', {
    type: 'complex',
    multiValued: true,
    subAttributes: [
      attr('formatted', 'The full address, formatted for display.', { maxLength: 1000 }),
      attr('streetAddress', 'The street.', { maxLength: 500 }),
      attr('locality', 'The city or locality.', { maxLength: 200 }),
      attr('region', 'The state or region.', { maxLength: 200 }),
      attr('postalCode', 'The postal code.', { maxLength: 50 }),
      attr('country', 'The country, ISO 3166-1 alpha-2.', { maxLength: 50 }),
      attr('type', 'A label, e.g. work.', { maxLength: 50 }),
      attr('primary', 'The primary address (at most one).', { type: 'boolean' }),
    ],
  }),
  keptList('entitlements', 'Entitlements (they grant nothing on the platform).'),
  keptList('roles', 'Roles (they grant nothing on the platform).'),
];

export const USER_SCHEMA: SchemaDef = {
  id: SCIM_URN.user,
  name: 'User',
  description: 'A person of the organisation: a member, or an invited address until the invitation is answered.',
  attributes: [
    attr('userName', 'The sign-in email address. One account per address on the platform; it cannot be changed once set.', {
      required: true,
      mutability: 'immutable',
      uniqueness: 'global',
      maxLength: 254,
    }),
    attr('name', 'The components of the name.', {
      type: 'complex',
      subAttributes: [
        attr('formatted', 'The full name, formatted for display.', { maxLength: 200 }),
        attr('familyName', 'The family name.', { maxLength: 200 }),
        attr('givenName', 'The given name.', { maxLength: 200 }),
        attr('middleName', 'The middle name(s). Kept as sent.', { maxLength: 200 }),
        attr('honorificPrefix', 'The honorific prefix, e.g. "Dr.". Kept as sent.', { maxLength: 200 }),
        attr('honorificSuffix', 'The honorific suffix, e.g. "PhD". Kept as sent.', { maxLength: 200 }),
      ],
    }),
    attr('displayName', 'The name shown for the person on the platform.', { maxLength: 200 }),
    attr('title', 'The job title.', { maxLength: 200 }),
    attr('active', 'False disables the person (still listed and readable); an invited address stops being invited.', { type: 'boolean' }),
    attr('emails', 'Email addresses. Kept as sent; the sign-in address is userName.', {
      type: 'complex',
      multiValued: true,
      subAttributes: [
        attr('value', 'An email address.', { maxLength: 254 }),
        attr('type', 'work, home or other.', { canonicalValues: ['work', 'home', 'other'], maxLength: 50 }),
        attr('primary', 'The primary address (at most one).', { type: 'boolean' }),
      ],
      ignoredSubAttributes: ['display'],
    }),
    attr('groups', 'The group the person is in (a person is in at most one group). Change it through the Group resource.', {
      type: 'complex',
      multiValued: true,
      mutability: 'readOnly',
      subAttributes: [
        attr('value', 'The group id.', { mutability: 'readOnly', caseExact: true }),
        attr('$ref', 'The group URI.', { type: 'reference', referenceTypes: ['Group'], mutability: 'readOnly', caseExact: true }),
        attr('display', 'The group name.', { mutability: 'readOnly' }),
        attr('type', 'Always "direct".', { mutability: 'readOnly', canonicalValues: ['direct'] }),
      ],
    }),
    externalId('user'),
    ...KEPT_USER_ATTRIBUTES,
  ],
  // The password is never kept nor answered (sign-in is the platform's); certificates are not kept.
  ignored: ['password', 'x509Certificates'],
};

export const ENTERPRISE_SCHEMA: SchemaDef = {
  id: SCIM_URN.enterprise,
  name: 'EnterpriseUser',
  description: 'Enterprise attributes of a User.',
  attributes: [
    attr('employeeNumber', 'The employee number.', { maxLength: 100 }),
    attr('department', 'The department.', { maxLength: 200 }),
    attr('costCenter', 'The cost center. Kept as sent.', { maxLength: 200 }),
    attr('organization', 'The organization. Kept as sent.', { maxLength: 200 }),
    attr('division', 'The division. Kept as sent.', { maxLength: 200 }),
    attr('manager', "The person's manager: the id of another User of the organisation.", {
      type: 'complex',
      subAttributes: [
        attr('value', 'The id of the manager User.', { caseExact: true }),
        attr('$ref', 'The URI of the manager User.', { type: 'reference', referenceTypes: ['User'], mutability: 'readOnly', caseExact: true }),
      ],
      ignoredSubAttributes: ['displayName'],
    }),
  ],
  ignored: [],
};

export const GROUP_SCHEMA: SchemaDef = {
  id: SCIM_URN.group,
  name: 'Group',
  description: 'A group of the organisation. Created through SCIM it holds no permissions.',
  attributes: [
    attr('displayName', 'The group name, unique in the organisation ignoring case.', { required: true, uniqueness: 'server', maxLength: 100 }),
    attr(
      'members',
      'The people in the group. A person is in at most one group: the group that claimed them first keeps them; an add here waits until it lets them go.',
      {
        type: 'complex',
        multiValued: true,
        subAttributes: [
          attr('value', 'The id of a User.', { mutability: 'immutable', caseExact: true }),
          attr('$ref', 'The URI of the User.', { type: 'reference', referenceTypes: ['User'], mutability: 'readOnly', caseExact: true }),
          attr('display', 'The name of the User.', { mutability: 'readOnly' }),
          attr('type', 'Always "User" (groups do not nest).', { mutability: 'immutable', canonicalValues: ['User'] }),
        ],
      },
    ),
    externalId('group'),
  ],
  ignored: [],
};

export const USER_RESOURCE: ResourceDef = { name: 'User', endpoint: '/Users', core: USER_SCHEMA, extensions: [ENTERPRISE_SCHEMA], common: [ID, META] };
export const GROUP_RESOURCE: ResourceDef = { name: 'Group', endpoint: '/Groups', core: GROUP_SCHEMA, extensions: [], common: [ID, META] };

/** Case-insensitive lookup of an attribute by name. */
export const findAttr = (list: AttrDef[] | undefined, name: string): AttrDef | undefined => list?.find((a) => a.name.toLowerCase() === name.toLowerCase());

export const isIgnoredAttr = (list: string[] | undefined, name: string): boolean => !!list?.some((n) => n.toLowerCase() === name.toLowerCase());

/** RFC 7643 §7 representation of a schema (internal fields left out). */
export function describeSchema(schema: SchemaDef, location: string): Record<string, unknown> {
  const describe = (a: AttrDef): Record<string, unknown> => ({
    name: a.name,
    type: a.type,
    multiValued: a.multiValued,
    description: a.description,
    required: a.required,
    caseExact: a.caseExact,
    mutability: a.mutability,
    returned: a.returned,
    uniqueness: a.uniqueness,
    ...(a.canonicalValues ? { canonicalValues: a.canonicalValues } : {}),
    ...(a.referenceTypes ? { referenceTypes: a.referenceTypes } : {}),
    ...(a.subAttributes ? { subAttributes: a.subAttributes.map(describe) } : {}),
  });
  return {
    schemas: [SCIM_URN.schema],
    id: schema.id,
    name: schema.name,
    description: schema.description,
    attributes: schema.attributes.map(describe),
    meta: { resourceType: 'Schema', location },
  };
}
