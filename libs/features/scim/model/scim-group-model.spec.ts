import { ScimError } from './scim-error';
import { groupFields, groupState, presentGroup, ScimGroupRow, ScimMemberRow } from './scim-group-model';
import { SCIM_URN } from './scim-schemas';

const BASE = 'https://api.example.org';
const row = (more: Partial<ScimGroupRow> = {}): ScimGroupRow => ({
  id: '3',
  organisation_id: '1',
  name: 'Nurses',
  external_id: null,
  created_at: new Date('2026-01-02T03:04:05.678Z'),
  updated_at: new Date('2026-02-03T04:05:06.789Z'),
  ...more,
});
const members: ScimMemberRow[] = [
  { group_id: '3', user_id: '11', display: 'Ana' },
  { group_id: '3', user_id: '12', display: 'Bo' },
];

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ScimError);
    return { scimType: (err as ScimError).scimType, code: (err as ScimError).code, message: (err as ScimError).message };
  }
  throw new Error('did not throw');
};

describe('groupState', () => {
  it('is the editable state: no meta, externalId only when set, members as bare values', () => {
    expect(groupState(row(), members)).toEqual({
      schemas: [SCIM_URN.group],
      id: '3',
      displayName: 'Nurses',
      members: [{ value: '11' }, { value: '12' }],
    });
    expect(groupState(row({ external_id: 'ext-9' }))).toEqual({ schemas: [SCIM_URN.group], id: '3', externalId: 'ext-9', displayName: 'Nurses' });
  });

  it('leaves members out when none were loaded or there are none', () => {
    expect(groupState(row())).not.toHaveProperty('members');
    expect(groupState(row(), [])).not.toHaveProperty('members');
  });
});

describe('presentGroup', () => {
  it('answers the RFC 7643 representation with members, their $ref and meta', () => {
    expect(presentGroup(row({ external_id: 'ext-9' }), members, BASE)).toEqual({
      schemas: [SCIM_URN.group],
      id: '3',
      externalId: 'ext-9',
      displayName: 'Nurses',
      members: [
        { value: '11', $ref: `${BASE}/scim/v2/Users/11`, display: 'Ana', type: 'User' },
        { value: '12', $ref: `${BASE}/scim/v2/Users/12`, display: 'Bo', type: 'User' },
      ],
      meta: {
        resourceType: 'Group',
        created: '2026-01-02T03:04:05.678Z',
        lastModified: '2026-02-03T04:05:06.789Z',
        location: `${BASE}/scim/v2/Groups/3`,
      },
    });
  });

  it('hides members’ names from a caller that may not read users', () => {
    const shown = presentGroup(row(), members, BASE, false).members as Array<Record<string, unknown>>;
    expect(shown).toEqual([
      { value: '11', $ref: `${BASE}/scim/v2/Users/11`, type: 'User' },
      { value: '12', $ref: `${BASE}/scim/v2/Users/12`, type: 'User' },
    ]);
  });

  it('answers an empty members list when loaded and empty, and none when not loaded (excluded)', () => {
    expect(presentGroup(row(), [], BASE).members).toEqual([]);
    const unloaded = presentGroup(row(), undefined, BASE);
    expect(unloaded).not.toHaveProperty('members');
    expect(unloaded).not.toHaveProperty('externalId');
  });
});

describe('groupFields', () => {
  it('reads displayName and externalId trimmed, and member ids deduplicated in order', () => {
    expect(
      groupFields({
        displayName: '  Nurses ',
        externalId: ' ext-9 ',
        members: [{ value: '12' }, { value: ' 11 ', type: 'User' }, { value: '12', type: 'user' }],
      }),
    ).toEqual({ displayName: 'Nurses', externalId: 'ext-9', members: ['12', '11'] });
  });

  it('takes a blank or missing externalId, and missing members, as none', () => {
    expect(groupFields({ displayName: 'Nurses', externalId: '   ' })).toEqual({ displayName: 'Nurses', externalId: null, members: [] });
    expect(groupFields({ displayName: 'Nurses', externalId: 7, members: 'x' })).toEqual({ displayName: 'Nurses', externalId: null, members: [] });
  });

  it.each([
    ['missing', {}],
    ['blank', { displayName: '  ' }],
    ['not a string', { displayName: 5 }],
  ])('refuses a displayName that is %s with invalidValue', (_, state) => {
    expect(refusal(() => groupFields(state))).toEqual({ scimType: 'invalidValue', code: 'validation_failed', message: 'displayName: is required.' });
  });

  it.each([
    ['not a User id', [{ value: 'abc' }]],
    ['zero-led', [{ value: '012' }]],
    ['a number rather than a string', [{ value: 12 }]],
    ['missing', [{ display: 'Ana' }]],
  ])('refuses a member value that is %s, naming its index', (_, list) => {
    expect(refusal(() => groupFields({ displayName: 'Nurses', members: list }))).toEqual({
      scimType: 'invalidValue',
      code: 'validation_failed',
      message: 'members[0].value: must be the id of a User.',
    });
  });

  it('refuses a member of another type: groups do not nest', () => {
    const r = refusal(() => groupFields({ displayName: 'Nurses', members: [{ value: '11' }, { value: '4', type: 'Group' }] }));
    expect(r.scimType).toBe('invalidValue');
    expect(r.message).toBe('members[1].type: only User members are supported (groups do not nest).');
  });
});
