import { EntityManager } from 'typeorm';
import { AppConfig } from '@kernel/config';
import { CursorCodec, TransactionHost } from '@kernel/database';
import { CaseEntity } from './case.entity';
import { CASE_TITLE_MAX, CasesService, EXTERNAL_REF_MAX } from './cases.service';

const ORG = '1';
const OTHER_ORG = '2';

/**
 * In-memory groups and cases answering the queries CasesService makes: the group look-up, the
 * insert that does nothing on a taken (organisation, external_ref), the close of an open case.
 */
class FakeDb {
  groups: Array<{ id: string; organisationId: string }> = [];
  cases: CaseEntity[] = [];
  queries: string[] = [];
  runs = 0;
  private nextId = 500;

  addCase(organisationId: string, externalRef: string, over: Partial<CaseEntity> = {}): CaseEntity {
    const c = Object.assign(new CaseEntity(), {
      id: String(this.nextId++),
      organisationId,
      externalRef,
      title: null,
      groupId: null,
      status: 'open',
      closedAt: null,
      createdAt: new Date(0),
      updatedAt: new Date(0),
      ...over,
    });
    this.cases.push(c);
    return c;
  }

  private readonly copy = (c: CaseEntity | undefined) => (c ? Object.assign(new CaseEntity(), c) : null);

  readonly manager = {
    query: async (sql: string, params: unknown[]) => {
      this.queries.push(sql);
      if (/^SELECT id FROM groups WHERE id = \$1 AND organisation_id = \$2/.test(sql)) {
        return this.groups.filter((g) => g.id === params[0] && g.organisationId === params[1]).map((g) => ({ id: g.id }));
      }
      if (/^INSERT INTO cases/.test(sql) && /ON CONFLICT \(organisation_id, external_ref\) DO NOTHING/.test(sql)) {
        const [organisationId, externalRef, title, groupId] = params as [string, string, string | null, string | null];
        if (this.cases.some((c) => c.organisationId === organisationId && c.externalRef === externalRef)) return [];
        return [{ id: this.addCase(organisationId, externalRef, { title, groupId }).id }];
      }
      if (/^UPDATE cases SET status = 'closed', closed_at = now\(\)/.test(sql) && /AND status = 'open'/.test(sql)) {
        const c = this.cases.find((x) => x.id === params[0] && x.status === 'open');
        if (c) Object.assign(c, { status: 'closed', closedAt: new Date() });
        return [];
      }
      throw new Error(`unexpected query: ${sql}`);
    },
    getRepository: (target: unknown) => {
      if (target !== CaseEntity) throw new Error('unexpected repository');
      const match = (where: Partial<CaseEntity>) => (c: CaseEntity) => Object.entries(where).every(([k, v]) => c[k as keyof CaseEntity] === v);
      return {
        findOneBy: async (where: Partial<CaseEntity>) => this.copy(this.cases.find(match(where))),
        findOneByOrFail: async (where: Partial<CaseEntity>) => {
          const found = this.cases.find(match(where));
          if (!found) throw new Error('EntityNotFound');
          return this.copy(found);
        },
      };
    },
  } as unknown as EntityManager;
}

const setup = () => {
  const db = new FakeDb();
  const tx = {
    manager: db.manager,
    run: <T>(fn: (m: EntityManager) => Promise<T>) => {
      db.runs++;
      return fn(db.manager);
    },
  } as unknown as TransactionHost;
  const config = { memberAppBaseUrl: 'https://members.example' } as AppConfig;
  return { db, service: new CasesService(tx, config, {} as CursorCodec) };
};

describe('CasesService.open', () => {
  it('opens a case under the reference, kept exactly as sent', async () => {
    const { db, service } = setup();
    const { case: opened, created } = await service.open(ORG, { externalRef: ' REF-1 ' });
    expect(created).toBe(true);
    expect(opened).toMatchObject({ organisationId: ORG, externalRef: ' REF-1 ', title: null, groupId: null, status: 'open' });
    expect(db.cases).toHaveLength(1);
  });

  it('answers the case already open under the reference, leaving its title and group as they are', async () => {
    const { db, service } = setup();
    db.groups.push({ id: '9', organisationId: ORG });
    const first = await service.open(ORG, { externalRef: 'REF-1', title: 'First' });
    const again = await service.open(ORG, { externalRef: 'REF-1', title: 'Second', groupId: '9' });
    expect(again.created).toBe(false);
    expect(again.case).toMatchObject({ id: first.case.id, title: 'First', groupId: null });
    expect(db.cases).toHaveLength(1);
  });

  it('opens one case per organisation under the same reference', async () => {
    const { db, service } = setup();
    const mine = await service.open(ORG, { externalRef: 'REF-1' });
    const theirs = await service.open(OTHER_ORG, { externalRef: 'REF-1' });
    expect(theirs.created).toBe(true);
    expect(theirs.case.id).not.toBe(mine.case.id);
    expect(theirs.case.organisationId).toBe(OTHER_ORG);
    expect(db.cases).toHaveLength(2);
  });

  it('refuses a blank, missing or over-long reference before touching the database', async () => {
    const { db, service } = setup();
    for (const externalRef of ['', '   ', undefined as unknown as string, 42 as unknown as string]) {
      await expect(service.open(ORG, { externalRef })).rejects.toMatchObject({
        code: 'validation_failed',
        message: expect.stringContaining('external_ref'),
      });
    }
    await expect(service.open(ORG, { externalRef: 'r'.repeat(EXTERNAL_REF_MAX + 1) })).rejects.toMatchObject({
      code: 'validation_failed',
      message: expect.stringContaining('external_ref'),
    });
    expect(db.runs).toBe(0);
    await expect(service.open(ORG, { externalRef: 'r'.repeat(EXTERNAL_REF_MAX) })).resolves.toMatchObject({ created: true });
  });

  it('trims the title, keeps a blank one as none, and refuses one too long once trimmed', async () => {
    const { db, service } = setup();
    await expect(service.open(ORG, { externalRef: 'a', title: '  Billing  ' })).resolves.toMatchObject({ case: { title: 'Billing' } });
    await expect(service.open(ORG, { externalRef: 'b', title: '   ' })).resolves.toMatchObject({ case: { title: null } });
    const longest = 't'.repeat(CASE_TITLE_MAX);
    await expect(service.open(ORG, { externalRef: 'c', title: ` ${longest} ` })).resolves.toMatchObject({ case: { title: longest } });
    await expect(service.open(ORG, { externalRef: 'd', title: `${longest}t` })).rejects.toMatchObject({
      code: 'validation_failed',
      message: expect.stringContaining('title'),
    });
    expect(db.cases.map((c) => c.externalRef)).toEqual(['a', 'b', 'c']);
  });

  it("opens a case in one of the organisation's groups", async () => {
    const { db, service } = setup();
    db.groups.push({ id: '9', organisationId: ORG });
    await expect(service.open(ORG, { externalRef: 'a', groupId: '9' })).resolves.toMatchObject({ created: true, case: { groupId: '9' } });
  });

  it("refuses another organisation's group, a missing one and a malformed id, opening nothing", async () => {
    const { db, service } = setup();
    db.groups.push({ id: '9', organisationId: OTHER_ORG });
    for (const groupId of ['9', '10', 'abc']) {
      await expect(service.open(ORG, { externalRef: 'a', groupId })).rejects.toMatchObject({
        code: 'validation_failed',
        message: expect.stringContaining('group_id'),
      });
    }
    expect(db.cases).toHaveLength(0);
  });
});

describe('CasesService.close', () => {
  it('closes an open case', async () => {
    const { db, service } = setup();
    const c = db.addCase(ORG, 'a');
    const closed = await service.close(c.id);
    expect(closed).toMatchObject({ id: c.id, status: 'closed' });
    expect(closed.closedAt).toBeInstanceOf(Date);
  });

  it('changes nothing when closing a closed case', async () => {
    const { db, service } = setup();
    const closedAt = new Date('2026-01-01T00:00:00Z');
    const c = db.addCase(ORG, 'a', { status: 'closed', closedAt });
    await expect(service.close(c.id)).resolves.toMatchObject({ status: 'closed', closedAt });
  });

  it('answers not_found for a missing case, and for a malformed id without touching the database', async () => {
    const { db, service } = setup();
    await expect(service.close('999')).rejects.toMatchObject({ code: 'not_found' });
    const runs = db.runs;
    await expect(service.close('x1')).rejects.toMatchObject({ code: 'not_found' });
    expect(db.runs).toBe(runs);
  });
});

describe('CasesService.get / conversationUrl', () => {
  it("answers not_found for another organisation's case", async () => {
    const { db, service } = setup();
    const c = db.addCase(OTHER_ORG, 'a');
    await expect(service.get(ORG, c.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.conversationUrl(ORG, c.id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.get(OTHER_ORG, c.id)).resolves.toMatchObject({ id: c.id });
  });

  it('answers where to start a conversation in an open case', async () => {
    const { db, service } = setup();
    const c = db.addCase(ORG, 'a');
    await expect(service.conversationUrl(ORG, c.id)).resolves.toEqual({
      case_id: c.id,
      url: `https://members.example/cases/${c.id}/conversations/new`,
    });
  });

  it('refuses a closed case with case_closed', async () => {
    const { db, service } = setup();
    const c = db.addCase(ORG, 'a');
    await service.close(c.id);
    await expect(service.conversationUrl(ORG, c.id)).rejects.toMatchObject({ code: 'case_closed' });
  });
});
