import { EntityManager } from 'typeorm';
import { INTEGRATIONS_MANAGE, ORGANISATION_OWN, PEOPLE_MANAGE } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { PermissionEntity } from './permission.entity';
import { PermissionsService } from './permissions.service';

const entry = (code: string, position: number, grantable = true): PermissionEntity =>
  Object.assign(new PermissionEntity(), { code, name: code, grantable, position, createdAt: new Date(0) });

/** The catalogue, stored out of order so that `list` must sort by position. */
const CATALOGUE = [
  entry('cases.read', 3),
  entry(INTEGRATIONS_MANAGE, 4, false),
  entry(PEOPLE_MANAGE, 1),
  entry(ORGANISATION_OWN, 5, false),
  entry('cases.write', 2),
];

/** A TransactionHost whose manager answers PermissionEntity finds from CATALOGUE. */
const service = () => {
  const repository = {
    find: async (options?: { order?: { position?: 'ASC' | 'DESC' } }) => {
      const rows = [...CATALOGUE];
      if (options?.order?.position === 'ASC') rows.sort((a, b) => a.position - b.position);
      return rows;
    },
  };
  const manager = {
    getRepository: (target: unknown) => {
      if (target !== PermissionEntity) throw new Error('unexpected repository');
      return repository;
    },
  } as unknown as EntityManager;
  return new PermissionsService({ manager } as unknown as TransactionHost);
};

describe('PermissionsService.list', () => {
  it('lists the catalogue in its order', async () => {
    expect((await service().list()).map((p) => p.code)).toEqual([PEOPLE_MANAGE, 'cases.write', 'cases.read', INTEGRATIONS_MANAGE, ORGANISATION_OWN]);
  });
});

describe('PermissionsService.known', () => {
  it('answers known codes sorted and deduplicated', async () => {
    await expect(service().known(['people.manage', 'cases.write', 'cases.read', 'cases.write'])).resolves.toEqual([
      'cases.read',
      'cases.write',
      'people.manage',
    ]);
    await expect(service().known([])).resolves.toEqual([]);
  });

  it('refuses unknown codes with unknown_permission, naming each once and no known one', async () => {
    const err = await service()
      .known(['cases.read', 'bogus.one', 'bogus.two', 'bogus.one'])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unknown_permission' });
    const message = (err as Error).message;
    expect(message).toContain('bogus.one, bogus.two');
    expect(message.match(/bogus\.one/g)).toHaveLength(1);
    expect(message).not.toContain('cases.read');
  });
});

describe('PermissionsService.checkChange', () => {
  it('answers the new codes normalised when every change is grantable', async () => {
    await expect(service().checkChange(['cases.read'], ['people.manage', 'cases.write', 'people.manage'])).resolves.toEqual(['cases.write', 'people.manage']);
  });

  it('checks the new codes are known before anything else', async () => {
    await expect(service().checkChange([ORGANISATION_OWN], ['nope'])).rejects.toMatchObject({ code: 'unknown_permission' });
  });

  it('refuses adding a code that is not grantable, naming it', async () => {
    const err = await service()
      .checkChange(['cases.read'], ['cases.read', INTEGRATIONS_MANAGE])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'permission_not_grantable' });
    expect((err as Error).message).toContain(INTEGRATIONS_MANAGE);
  });

  it('refuses removing a code that is not grantable, naming it', async () => {
    const err = await service()
      .checkChange([ORGANISATION_OWN, 'cases.read'], ['cases.read'])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'permission_not_grantable' });
    expect((err as Error).message).toContain(ORGANISATION_OWN);
  });

  it('allows keeping a non-grantable code while other codes change', async () => {
    await expect(service().checkChange([ORGANISATION_OWN, 'cases.read'], ['cases.write', ORGANISATION_OWN])).resolves.toEqual([
      'cases.write',
      ORGANISATION_OWN,
    ]);
  });
});

describe('PermissionsService.assertGrantable', () => {
  it('accepts grantable codes', async () => {
    await expect(service().assertGrantable(['cases.read', PEOPLE_MANAGE], 'The group')).resolves.toBeUndefined();
    await expect(service().assertGrantable([], 'The group')).resolves.toBeUndefined();
  });

  it('refuses any code that is not grantable, naming it and what carries it', async () => {
    const err = await service()
      .assertGrantable(['cases.read', ORGANISATION_OWN], 'The group')
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'permission_not_grantable' });
    expect((err as Error).message).toContain('The group');
    expect((err as Error).message).toContain(ORGANISATION_OWN);
    expect((err as Error).message).not.toContain('cases.read');
  });
});
