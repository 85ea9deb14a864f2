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

  it('with a window, gathers calls made across turns, and a call after the window goes in the next batch', async () => {
    // Fake timers: the window is the batch's own clock, so the test does not race a busy machine.
    jest.useFakeTimers();
    try {
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
      jest.advanceTimersByTime(20); // later turns, still inside the window of the first call
      const second = batch.push(2);
      expect(runs).toEqual([]);
      jest.advanceTimersByTime(10); // the window ends 30 ms after the first call
      expect(await Promise.all([first, second])).toEqual([1, 2]);
      expect(runs).toEqual([[1, 2]]);
      const third = batch.push(3);
      jest.advanceTimersByTime(29);
      expect(runs).toEqual([[1, 2]]);
      jest.advanceTimersByTime(1);
      expect(await third).toBe(3);
      expect(runs).toEqual([[1, 2], [3]]);
    } finally {
      jest.useRealTimers();
    }
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

describe('MicroBatch with a limit on batches in flight', () => {
  /** A run that answers only when told to, recording what each batch held. */
  const controlled = () => {
    const runs: number[][] = [];
    const answers: Array<(fail?: Error) => void> = [];
    const batch = new MicroBatch<number, number>(
      (items) =>
        new Promise<number[]>((resolve, reject) => {
          runs.push(items);
          answers.push((fail) => (fail ? reject(fail) : resolve(items.map((i) => i * 10))));
        }),
      3,
      0,
      1,
    );
    const turn = () => new Promise((r) => setImmediate(r));
    return { runs, answers, batch, turn };
  };

  it('sends a call alone at once, and gathers the calls made while a batch runs into the next', async () => {
    const { runs, answers, batch, turn } = controlled();
    const first = batch.push(1);
    await turn();
    expect(runs).toEqual([[1]]);
    const later = [batch.push(2), batch.push(3)];
    await turn();
    await turn();
    expect(runs).toEqual([[1]]); // waiting for the batch in flight
    answers[0]();
    expect(await first).toBe(10);
    await turn();
    expect(runs).toEqual([[1], [2, 3]]);
    answers[1]();
    expect(await Promise.all(later)).toEqual([20, 30]);
  });

  it('keeps to its maximum per batch while calls pile up behind a slow one', async () => {
    const { runs, answers, batch, turn } = controlled();
    const all = [batch.push(0)];
    await turn();
    for (let i = 1; i <= 7; i++) all.push(batch.push(i));
    await turn();
    expect(runs).toEqual([[0]]);
    for (let k = 0; k < 4; k++) {
      answers[k]();
      await turn();
      await turn();
    }
    expect(runs).toEqual([[0], [1, 2, 3], [4, 5, 6], [7]]);
    expect(await Promise.all(all)).toEqual([0, 10, 20, 30, 40, 50, 60, 70]);
  });

  it('fills every free place at once when several batches end together', async () => {
    const runs: number[][] = [];
    const answers: Array<() => void> = [];
    const batch = new MicroBatch<number, number>(
      (items) =>
        new Promise<number[]>((resolve) => {
          runs.push(items);
          answers.push(() => resolve(items));
        }),
      1,
      0,
      2,
    );
    const turn = () => new Promise((r) => setImmediate(r));
    const all = [0, 1, 2, 3, 4].map((i) => batch.push(i));
    await turn();
    expect(runs).toEqual([[0], [1]]);
    answers[0]();
    answers[1]();
    for (let i = 0; i < 5; i++) await turn(); // no batch ends meanwhile: only the two places freed can take calls
    expect(runs).toEqual([[0], [1], [2], [3]]);
    answers[2]();
    answers[3]();
    for (let i = 0; i < 5; i++) await turn();
    answers[4]();
    expect(await Promise.all(all)).toEqual([0, 1, 2, 3, 4]);
  });

  it('goes on after a failed batch: its calls fail, the next batch runs', async () => {
    const { runs, answers, batch, turn } = controlled();
    const first = batch.push(1);
    await turn();
    const second = batch.push(2);
    answers[0](new Error('database away'));
    await expect(first).rejects.toThrow('database away');
    await turn();
    expect(runs).toEqual([[1], [2]]);
    answers[1]();
    expect(await second).toBe(20);
  });
});
