import { MicroBatch } from './micro-batch';

describe('MicroBatch', () => {
  it('runs the calls of one turn together and answers each its own output', async () => {
    const runs: number[][] = [];
    const batch = new MicroBatch<number, number>(async (xs) => {
      runs.push(xs);
      return xs.map((x) => x * 10);
    });
    const first = await Promise.all([batch.call(1), batch.call(2), batch.call(3)]);
    const second = await batch.call(4);
    expect(first).toEqual([10, 20, 30]);
    expect(second).toBe(40);
    expect(runs).toEqual([[1, 2, 3], [4]]);
  });

  it('runs a full batch at once and the rest later', async () => {
    const runs: number[][] = [];
    const batch = new MicroBatch<number, number>(async (xs) => (runs.push(xs), xs), 2);
    expect(await Promise.all([1, 2, 3, 4, 5].map((x) => batch.call(x)))).toEqual([1, 2, 3, 4, 5]);
    expect(runs).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('fails every call of a batch whose run fails (thrown or rejected), and the next batch runs', async () => {
    let fail: 'throw' | 'reject' | null = 'throw';
    const batch = new MicroBatch<number, number>((xs) => {
      if (fail === 'throw') throw new Error('thrown');
      if (fail === 'reject') return Promise.reject(new Error('rejected'));
      return Promise.resolve(xs);
    });
    await expect(Promise.all([batch.call(1), batch.call(2)])).rejects.toThrow('thrown');
    fail = 'reject';
    const settled = await Promise.allSettled([batch.call(1), batch.call(2)]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    fail = null;
    expect(await batch.call(7)).toBe(7);
  });
});
