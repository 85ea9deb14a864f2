import { EntityManager } from 'typeorm';
import { DomainError, ORGANISATION_OWN, PEOPLE_MANAGE } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { PeopleManagersService } from './people-managers.service';

/** A manager answering the organisation lock and the counts of active people managers and owners from `state`. */
class FakeManager {
  readonly log: Array<{ sql: string; params: unknown[] }> = [];
  constructor(readonly state: { managers: number; owners: number }) {}

  async query(sql: string, params: unknown[] = []): Promise<unknown[]> {
    this.log.push({ sql, params });
    if (/FOR NO KEY UPDATE/.test(sql)) return [{ id: params[0] }];
    if (/count\(\*\)/.test(sql)) return [{ n: this.state.managers, owners: this.state.owners }];
    throw new Error(`unexpected query: ${sql}`);
  }
}

const setup = (managers: number, owners = 0) => {
  const m = new FakeManager({ managers, owners });
  const tx = { run: <T>(fn: (manager: EntityManager) => Promise<T>) => fn(m as unknown as EntityManager) } as unknown as TransactionHost;
  return { m, service: new PeopleManagersService(tx) };
};

/** A change that leaves `after` active people managers (and `owners` owners, unchanged if not given) and answers `result`. */
const leaving =
  (m: FakeManager, after: number, result = 'done', owners?: number) =>
  async (manager: EntityManager) => {
    expect(manager).toBe(m);
    m.state.managers = after;
    if (owners !== undefined) m.state.owners = owners;
    return result;
  };

describe('PeopleManagersService.preserving (last_people_manager)', () => {
  it('refuses a change that takes the organisation from one manager to none, without answering its result', async () => {
    const { m, service } = setup(1);
    const outcome = service.preserving('7', leaving(m, 0, 'should not be returned'));
    await expect(outcome).rejects.toBeInstanceOf(DomainError);
    await expect(outcome).rejects.toMatchObject({ code: 'last_people_manager' });
  });

  it('refuses a change from several managers to none', async () => {
    const { m, service } = setup(3);
    await expect(service.preserving('7', leaving(m, 0))).rejects.toMatchObject({ code: 'last_people_manager' });
  });

  it('allows a change that leaves at least one manager, and answers its result', async () => {
    const { m, service } = setup(2);
    await expect(service.preserving('7', leaving(m, 1, 'kept one'))).resolves.toBe('kept one');
  });

  it('allows a change in an organisation that had no manager and still has none', async () => {
    const { m, service } = setup(0);
    await expect(service.preserving('7', leaving(m, 0, 'none before'))).resolves.toBe('none before');
  });

  it('allows a change that gives a manager to an organisation that had none', async () => {
    const { m, service } = setup(0);
    await expect(service.preserving('7', leaving(m, 1, 'first one'))).resolves.toBe('first one');
  });

  it('refuses a change that takes the organisation from an owner to none, though people managers remain', async () => {
    const { m, service } = setup(3, 1);
    const outcome = service.preserving('7', leaving(m, 2, 'should not be returned', 0));
    await expect(outcome).rejects.toMatchObject({ code: 'last_people_manager', message: expect.stringContaining('no active owner') });
  });

  it('allows a change that leaves at least one owner, or one in an organisation that had none', async () => {
    const two = setup(2, 2);
    await expect(two.service.preserving('7', leaving(two.m, 1, 'kept one owner', 1))).resolves.toBe('kept one owner');
    const none = setup(2, 0);
    await expect(none.service.preserving('7', leaving(none.m, 1, 'no owner before', 0))).resolves.toBe('no owner before');
  });

  it('passes on what the change throws', async () => {
    const { service } = setup(1);
    const failure = new Error('change failed');
    await expect(
      service.preserving('7', () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
  });

  it("locks the organisation's row before counting, then counts before and after the change", async () => {
    const { m, service } = setup(1);
    const order: string[] = [];
    const query = m.query.bind(m);
    m.query = async (sql: string, params: unknown[] = []) => {
      order.push(/FOR NO KEY UPDATE/.test(sql) ? 'lock' : 'count');
      return query(sql, params);
    };
    await service.preserving('7', async () => {
      order.push('change');
    });
    expect(order).toEqual(['lock', 'count', 'change', 'count']);
    expect(m.log[0].sql).toMatch(/FROM organisations WHERE id = \$1 FOR NO KEY UPDATE/);
    expect(m.log[0].params).toEqual(['7']);
  });
});

describe('PeopleManagersService.count', () => {
  it('counts in the given organisation people whose group can manage people or owns the organisation', async () => {
    const { m, service } = setup(4);
    await expect(service.count(m as unknown as EntityManager, '9')).resolves.toBe(4);
    expect(m.log).toHaveLength(1);
    expect(m.log[0].params).toEqual(['9', [PEOPLE_MANAGE, ORGANISATION_OWN]]);
    expect(m.log[0].sql).toMatch(/NOT p\.disabled/);
  });
});
