import { EntityManager } from 'typeorm';
import { DomainError, INTEGRATIONS_MANAGE, ORGANISATION_OWN, PEOPLE_MANAGE } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { GroupEntity } from './group.entity';
import { GroupsService } from './groups.service';
import { GroupNameTakenError } from './model/groups.errors';
import { PeopleManagersService } from './people-managers.service';
import { PermissionEntity } from './permission.entity';
import { PermissionsService } from './permissions.service';

const ORG = '1';
const OTHER_ORG = '2';

const permission = (code: string, position: number, grantable = true): PermissionEntity =>
  Object.assign(new PermissionEntity(), { code, name: code, grantable, position, createdAt: new Date(0) });

const CATALOGUE = [
  permission(PEOPLE_MANAGE, 1),
  permission('cases.read', 2),
  permission('cases.write', 3),
  permission(INTEGRATIONS_MANAGE, 4, false),
  permission(ORGANISATION_OWN, 5, false),
];

interface Person {
  id: string;
  groupId: string | null;
}

const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { driverError: { code } });

/**
 * In-memory groups, people and cases, answering the calls GroupsService and PermissionsService
 * make of an EntityManager. `failNextInsert`/`failNextUpdate`/`failNextDelete` stand in for a
 * concurrent writer that won a race (the unique index, the cases FK).
 */
class FakeDb {
  groups: GroupEntity[] = [];
  people: Person[] = [];
  cases: Array<{ id: string; groupId: string }> = [];
  writes = 0;
  locks: string[] = [];
  failNextInsert?: Error;
  failNextUpdate?: Error;
  failNextDelete?: Error;
  private nextId = 100;

  group(organisationId: string, name: string, permissions: string[] = []): GroupEntity {
    const g = Object.assign(new GroupEntity(), {
      id: String(this.nextId++),
      organisationId,
      name,
      permissions,
      createdAt: new Date(0),
      updatedAt: new Date(0),
    });
    this.groups.push(g);
    return g;
  }

  readonly manager = {
    query: async (sql: string, params: unknown[]) => {
      if (/^SELECT 1 FROM cases WHERE group_id = \$1/.test(sql)) return this.cases.filter((c) => c.groupId === params[0]).map(() => ({ '?column?': 1 }));
      if (/^UPDATE people SET group_id = NULL/.test(sql)) {
        this.writes++;
        for (const p of this.people) if (p.groupId === params[0]) p.groupId = null;
        return [];
      }
      throw new Error(`unexpected query: ${sql}`);
    },
    getRepository: (target: unknown) => {
      if (target === PermissionEntity) return { find: async () => [...CATALOGUE].sort((a, b) => a.position - b.position) };
      if (target === GroupEntity) return this.groupRepository;
      throw new Error('unexpected repository');
    },
  } as unknown as EntityManager;

  private readonly groupRepository = {
    findOne: async ({ where, lock }: { where: { id: string; organisationId: string }; lock?: { mode: string } }) => {
      const found = this.groups.find((g) => g.id === where.id && g.organisationId === where.organisationId);
      if (found && lock) this.locks.push(found.id);
      return found ? Object.assign(new GroupEntity(), found, { permissions: [...found.permissions] }) : null;
    },
    insert: async (values: Pick<GroupEntity, 'organisationId' | 'name' | 'permissions'>) => {
      this.takeFailure('failNextInsert');
      this.writes++;
      const g = this.group(values.organisationId, values.name, values.permissions);
      return { identifiers: [{ id: g.id }] };
    },
    update: async ({ id }: { id: string }, patch: Partial<GroupEntity>) => {
      this.takeFailure('failNextUpdate');
      this.writes++;
      const g = this.groups.find((x) => x.id === id)!;
      if (patch.name !== undefined) g.name = patch.name;
      if (patch.permissions !== undefined) g.permissions = patch.permissions;
      return { affected: 1 };
    },
    delete: async ({ id }: { id: string }) => {
      this.takeFailure('failNextDelete');
      this.writes++;
      this.groups = this.groups.filter((g) => g.id !== id);
      return { affected: 1 };
    },
    createQueryBuilder: () => {
      const params: Record<string, string> = {};
      const qb = {
        where: (_sql: string, p: Record<string, string>) => (Object.assign(params, p), qb),
        andWhere: (_sql: string, p: Record<string, string>) => (Object.assign(params, p), qb),
        getExists: async () =>
          this.groups.some((g) => g.organisationId === params.org && g.name.toLowerCase() === params.name.toLowerCase() && g.id !== params.id),
      };
      return qb;
    },
  };

  private takeFailure(which: 'failNextInsert' | 'failNextUpdate' | 'failNextDelete'): void {
    const failure = this[which];
    this[which] = undefined;
    if (failure) throw failure;
  }
}

const setup = () => {
  const db = new FakeDb();
  const tx = { manager: db.manager, run: <T>(fn: (m: EntityManager) => Promise<T>) => fn(db.manager) } as unknown as TransactionHost;
  /** Stands in for the organisation lock and last-manager rule; records which organisation each change ran under. */
  const preservedFor: string[] = [];
  const managers = {
    preserving: async <T>(organisationId: string, change: (m: EntityManager) => Promise<T>) => {
      preservedFor.push(organisationId);
      return change(db.manager);
    },
  } as unknown as PeopleManagersService;
  const service = new GroupsService(tx, new PermissionsService(tx), managers);
  return { db, service, preservedFor };
};

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof DomainError ? e.code : e),
  );

describe('GroupsService.get', () => {
  it("answers not_found for another organisation's group, a missing one, and a malformed id", async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Support');
    await expect(service.get(ORG, g.id)).resolves.toMatchObject({ id: g.id, name: 'Support' });
    await expect(service.get(OTHER_ORG, g.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.get(ORG, '999')).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.get(ORG, `0${g.id}`)).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('GroupsService.create', () => {
  it('creates a group with its name trimmed and its codes normalised', async () => {
    const { db, service } = setup();
    const g = await service.create(ORG, { name: '  Support ', permissions: ['cases.write', 'cases.read', 'cases.write'] });
    expect(g).toMatchObject({ organisationId: ORG, name: 'Support', permissions: ['cases.read', 'cases.write'] });
    expect(db.groups).toHaveLength(1);
  });

  it('refuses a blank or over-long name', async () => {
    const { db, service } = setup();
    await expect(service.create(ORG, { name: '   ' })).rejects.toMatchObject({ code: 'validation_failed', message: expect.stringContaining('name') });
    await expect(service.create(ORG, { name: 'x'.repeat(101) })).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(service.create(ORG, { name: 'x'.repeat(100) })).resolves.toMatchObject({ name: 'x'.repeat(100) });
    expect(db.groups).toHaveLength(1);
  });

  it('refuses a name already used in the organisation, ignoring case, but not one used in another', async () => {
    const { db, service } = setup();
    db.group(ORG, 'Support');
    db.group(OTHER_ORG, 'Sales');
    await expect(service.create(ORG, { name: 'SUPPORT' })).rejects.toBeInstanceOf(GroupNameTakenError);
    await expect(service.create(ORG, { name: 'Sales' })).resolves.toMatchObject({ name: 'Sales' });
  });

  it('answers a name race lost to the unique index as the name taken; other write errors pass', async () => {
    const { db, service } = setup();
    db.failNextInsert = pgError('23505');
    await expect(service.create(ORG, { name: 'Support' })).rejects.toBeInstanceOf(GroupNameTakenError);
    const other = pgError('40001');
    db.failNextInsert = other;
    await expect(service.create(ORG, { name: 'Support' })).rejects.toBe(other);
  });

  it('refuses unknown and non-grantable codes before writing', async () => {
    const { db, service } = setup();
    expect(await codeOf(service.create(ORG, { name: 'A', permissions: ['nope'] }))).toBe('unknown_permission');
    expect(await codeOf(service.create(ORG, { name: 'B', permissions: [ORGANISATION_OWN] }))).toBe('permission_not_grantable');
    expect(db.writes).toBe(0);
  });
});

describe('GroupsService.update', () => {
  it('runs under the organisation lock and last-manager rule, locking the group row', async () => {
    const { db, service, preservedFor } = setup();
    const g = db.group(ORG, 'Support');
    await service.update(ORG, g.id, { name: 'Help' });
    expect(preservedFor).toEqual([ORG]);
    expect(db.locks).toEqual([g.id]);
  });

  it('renames, refusing a name another group of the organisation uses', async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Support');
    db.group(ORG, 'Sales');
    await expect(service.update(ORG, g.id, { name: 'sales' })).rejects.toBeInstanceOf(GroupNameTakenError);
    await expect(service.update(ORG, g.id, { name: ' Help ' })).resolves.toMatchObject({ name: 'Help' });
  });

  it("accepts the group's own name in another case as a rename, not a clash with itself", async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Support');
    await expect(service.update(ORG, g.id, { name: 'SUPPORT' })).resolves.toMatchObject({ name: 'SUPPORT' });
  });

  it('writes nothing when nothing changes', async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Support', ['cases.read', 'cases.write']);
    await expect(service.update(ORG, g.id, { name: 'Support', permissions: ['cases.write', 'cases.read'] })).resolves.toMatchObject({
      name: 'Support',
      permissions: ['cases.read', 'cases.write'],
    });
    await service.update(ORG, g.id, {});
    expect(db.writes).toBe(0);
  });

  it('replaces the codes, keeping a non-grantable one but refusing to drop it', async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Owners', [ORGANISATION_OWN]);
    await expect(service.update(ORG, g.id, { permissions: [ORGANISATION_OWN, 'cases.read'] })).resolves.toMatchObject({
      permissions: ['cases.read', ORGANISATION_OWN],
    });
    expect(await codeOf(service.update(ORG, g.id, { permissions: ['cases.read'] }))).toBe('permission_not_grantable');
    expect(db.groups[0].permissions).toEqual(['cases.read', ORGANISATION_OWN]);
  });

  it("answers not_found for another organisation's group", async () => {
    const { db, service } = setup();
    const g = db.group(OTHER_ORG, 'Support');
    expect(await codeOf(service.update(ORG, g.id, { name: 'Mine' }))).toBe('not_found');
    expect(db.groups[0].name).toBe('Support');
  });

  it('answers a name race lost on update as the name taken', async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Support');
    db.failNextUpdate = pgError('23505');
    await expect(service.update(ORG, g.id, { name: 'Help' })).rejects.toBeInstanceOf(GroupNameTakenError);
  });
});

describe('GroupsService.delete', () => {
  it('refuses with group_holds_cases while a case names the group, keeping its members', async () => {
    const { db, service, preservedFor } = setup();
    const g = db.group(ORG, 'Support');
    db.people.push({ id: '1', groupId: g.id });
    db.cases.push({ id: '5', groupId: g.id });
    expect(await codeOf(service.delete(ORG, g.id))).toBe('group_holds_cases');
    expect(db.groups).toHaveLength(1);
    expect(db.people[0].groupId).toBe(g.id);
    expect(preservedFor).toEqual([ORG]);
  });

  it('deletes a group holding no case, leaving its members without a group and others untouched', async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Support');
    const other = db.group(ORG, 'Sales');
    db.cases.push({ id: '5', groupId: other.id });
    db.people.push({ id: '1', groupId: g.id }, { id: '2', groupId: other.id });
    await service.delete(ORG, g.id);
    expect(db.groups.map((x) => x.id)).toEqual([other.id]);
    expect(db.people).toEqual([
      { id: '1', groupId: null },
      { id: '2', groupId: other.id },
    ]);
  });

  it('answers a case added meanwhile (the FK) as group_holds_cases; other errors pass', async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Support');
    db.failNextDelete = pgError('23503');
    expect(await codeOf(service.delete(ORG, g.id))).toBe('group_holds_cases');
    const other = pgError('40P01');
    db.failNextDelete = other;
    await expect(service.delete(ORG, g.id)).rejects.toBe(other);
  });

  it("answers not_found for another organisation's group", async () => {
    const { db, service } = setup();
    const g = db.group(OTHER_ORG, 'Support');
    expect(await codeOf(service.delete(ORG, g.id))).toBe('not_found');
    expect(db.groups).toHaveLength(1);
  });
});

describe('GroupsService.addPermission', () => {
  it('adds a grantable code, and changes nothing for a code the group holds', async () => {
    const { db, service, preservedFor } = setup();
    const g = db.group(ORG, 'Support', ['cases.read']);
    await expect(service.addPermission(ORG, g.id, PEOPLE_MANAGE)).resolves.toEqual(['cases.read', PEOPLE_MANAGE]);
    expect(db.writes).toBe(1);
    await expect(service.addPermission(ORG, g.id, 'cases.read')).resolves.toEqual(['cases.read', PEOPLE_MANAGE]);
    expect(db.writes).toBe(1);
    expect(preservedFor).toEqual([ORG, ORG]);
  });

  it('refuses an unknown code and a non-grantable one', async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Support', ['cases.read']);
    expect(await codeOf(service.addPermission(ORG, g.id, 'nope'))).toBe('unknown_permission');
    expect(await codeOf(service.addPermission(ORG, g.id, INTEGRATIONS_MANAGE))).toBe('permission_not_grantable');
    expect(db.writes).toBe(0);
  });
});

describe('GroupsService.removePermission', () => {
  it('removes a grantable code the group holds', async () => {
    const { db, service, preservedFor } = setup();
    const g = db.group(ORG, 'Support', ['cases.read', 'cases.write']);
    await expect(service.removePermission(ORG, g.id, 'cases.read')).resolves.toEqual(['cases.write']);
    expect(db.groups[0].permissions).toEqual(['cases.write']);
    expect(preservedFor).toEqual([ORG]);
  });

  it('changes nothing for a known code the group lacks, even a non-grantable one', async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Support', ['cases.read']);
    await expect(service.removePermission(ORG, g.id, 'cases.write')).resolves.toEqual(['cases.read']);
    await expect(service.removePermission(ORG, g.id, ORGANISATION_OWN)).resolves.toEqual(['cases.read']);
    expect(db.writes).toBe(0);
  });

  it('refuses an unknown code with unknown_permission', async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Support', ['cases.read']);
    expect(await codeOf(service.removePermission(ORG, g.id, 'nope'))).toBe('unknown_permission');
  });

  it('refuses removing a non-grantable code as a validation failure of code, not permission_not_grantable', async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Owners', [ORGANISATION_OWN, 'cases.read']);
    const err = await service.removePermission(ORG, g.id, ORGANISATION_OWN).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'validation_failed', message: expect.stringContaining(`code: ${ORGANISATION_OWN}`) });
    expect(db.groups[0].permissions).toEqual([ORGANISATION_OWN, 'cases.read']);
  });
});

describe('GroupsService.getPermissions / setPermissions', () => {
  it("answers and replaces a group's codes", async () => {
    const { db, service } = setup();
    const g = db.group(ORG, 'Support', ['cases.read']);
    await expect(service.getPermissions(ORG, g.id)).resolves.toEqual(['cases.read']);
    await expect(service.setPermissions(ORG, g.id, ['cases.write', PEOPLE_MANAGE])).resolves.toEqual(['cases.write', PEOPLE_MANAGE]);
    await expect(service.getPermissions(ORG, g.id)).resolves.toEqual(['cases.write', PEOPLE_MANAGE]);
  });
});
