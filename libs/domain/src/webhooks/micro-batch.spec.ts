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
});

describe('MicroBatch with atOnceWhenIdle', () => {
  it('goes in the next turn when no run is under way; while one is, waits the window and gathers', async () => {
    const runs: number[][] = [];
    const gates: Array<() => void> = [];
    const batch = new MicroBatch<number, number>(
      (items) => {
        runs.push(items);
        return new Promise((resolve) => gates.push(() => resolve(items)));
      },
      100,
      30,
      true,
    );
    const first = batch.push(1);
    await new Promise((r) => setImmediate(r));
    expect(runs).toEqual([[1]]); // idle: no 30 ms window
    const second = batch.push(2);
    await new Promise((r) => setImmediate(r));
    const third = batch.push(3);
    await new Promise((r) => setImmediate(r));
    expect(runs).toEqual([[1]]); // busy: 2 and 3 wait the window together
    await new Promise((r) => setTimeout(r, 40));
    expect(runs).toEqual([[1], [2, 3]]);
    // Runs do not wait for one another: the second went while the first was still under way.
    gates[1]();
    expect(await Promise.all([second, third])).toEqual([2, 3]);
    gates[0]();
    expect(await first).toBe(1);
  });

  it('a failed run fails only its own calls, and the next call (idle again) goes at once', async () => {
    let fail = true;
    const runs: number[][] = [];
    const batch = new MicroBatch<number, number>(
      async (items) => {
        runs.push(items);
        if (fail) throw new Error('database away');
        return items;
      },
      100,
      1000,
      true,
    );
    await expect(batch.push(1)).rejects.toThrow('database away');
    fail = false;
    const started = Date.now();
    expect(await batch.push(2)).toBe(2);
    expect(Date.now() - started).toBeLessThan(500);
    expect(runs).toEqual([[1], [2]]);
  });
});
