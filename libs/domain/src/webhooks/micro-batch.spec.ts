import { MicroBatch } from './micro-batch';

describe('MicroBatch', () => {
  it('runs the calls of one turn together and answers each its own result', async () => {
    const runs: number[][] = [];
    const batch = new MicroBatch<number, number>(async (items) => {
      runs.push(items);
      return items.map((i) => i * 10);
    });
    const answers = await Promise.all([1, 2, 3].map((n) => batch.push(n)));
    expect(answers).toEqual([10, 20, 30]);
    expect(runs).toEqual([[1, 2, 3]]);
    expect(await batch.push(4)).toBe(40);
    expect(runs).toEqual([[1, 2, 3], [4]]);
  });

  it('never lets a batch grow past its maximum', async () => {
    const sizes: number[] = [];
    const batch = new MicroBatch<number, number>(async (items) => {
      sizes.push(items.length);
      return items;
    }, 4);
    await Promise.all(Array.from({ length: 10 }, (_, i) => batch.push(i)));
    expect(sizes).toEqual([4, 4, 2]);
  });

  it('fails every call of a failed batch, and only those', async () => {
    let fail = true;
    const batch = new MicroBatch<number, number>(async (items) => {
      if (fail) throw new Error('database away');
      return items;
    });
    const failed = await Promise.allSettled([batch.push(1), batch.push(2)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await batch.push(3)).toBe(3);
  });

  it('refuses a run that answers the wrong number of results', async () => {
    const batch = new MicroBatch<number, number>(async () => [1]);
    await expect(Promise.all([batch.push(1), batch.push(2)])).rejects.toThrow('1 results for 2 items');
  });

  it('with a window, gathers calls made across turns', async () => {
    const runs: number[][] = [];
    const batch = new MicroBatch<number, number>(
      async (items) => {
        runs.push(items);
        return items;
      },
      100,
      30,
    );
    const first = batch.push(1);
    await new Promise((r) => setImmediate(r));
    const second = batch.push(2);
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(runs).toEqual([[1, 2]]);
  });

  it('fails the batch, not the process, when run throws before returning a promise', async () => {
    let fail = true;
    const batch = new MicroBatch<number, number>((items) => {
      if (fail) throw new Error('thrown at once');
      return Promise.resolve(items);
    });
    const settled = await Promise.allSettled([batch.push(1), batch.push(2)]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await batch.push(7)).toBe(7);
  });
});
