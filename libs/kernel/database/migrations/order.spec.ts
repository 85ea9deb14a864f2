import { MIGRATIONS } from '.';

describe('MIGRATIONS', () => {
  it('lists the migrations in the order TypeORM applies them (by the timestamp in their name), each once', () => {
    const stamps = MIGRATIONS.map((M) => Number(/(\d{13})$/.exec(M.name)?.[1]));
    expect(stamps.every((s) => Number.isFinite(s))).toBe(true);
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    expect(new Set(stamps).size).toBe(stamps.length);
  });
});
