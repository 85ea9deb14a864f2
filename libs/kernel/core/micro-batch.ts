interface Pending<I, O> {
  item: I;
  resolve: (out: O) => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers calls into one call of `run` (at most `max` items each), and answers each caller with its
 * own result; `run` answers one result per item, in order. Under load, dozens of concurrent
 * deliveries then share one database round trip instead of making one each. When a batch goes:
 * - `waitMs` > 0: `waitMs` after its first call (alone, a call waits that long);
 * - `waitMs` 0: at the end of the event-loop turn of its first call;
 * - `inFlight` (a number): at the end of the turn too, unless `inFlight` batches are already running;
 *   then the calls gather until one of them ends, and go together as the next. Alone, a call waits for
 *   nothing; busy, the batch grows with the round trip it waits for (group commit).
 */
export class MicroBatch<I, O> {
  private pending: Array<Pending<I, O>> = [];
  private scheduled = false;
  private running = 0;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly max = 200,
    private readonly waitMs = 0,
    private readonly inFlight = Infinity,
  ) {}

  push(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.max && this.running < this.inFlight) this.flush();
      else this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.inFlight || this.pending.length === 0) return;
    this.scheduled = true;
    if (this.waitMs > 0) setTimeout(() => this.flush(), this.waitMs);
    else setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    if (this.running >= this.inFlight) return; // a batch filled up meanwhile: this one goes when one ends
    const batch = this.pending.splice(0, this.max);
    if (batch.length === 0) return;
    this.running++;
    this.schedule(); // more than `max` waited, and there is room for another batch: it goes too
    let outs: Promise<O[]>;
    try {
      outs = this.run(batch.map((b) => b.item));
    } catch (err) {
      // A `run` that throws before it returns a promise fails its batch, not the process (flush runs from a timer).
      outs = Promise.reject(err);
    }
    // The next batch is scheduled before this one's callers hear back, so it never waits for what they do next.
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.running--;
      this.schedule();
    };
    outs
      .then(
        (outs) => {
          end();
          if (outs.length !== batch.length) throw new Error(`micro-batch: ${outs.length} results for ${batch.length} items`);
          batch.forEach((b, i) => b.resolve(outs[i]));
        },
        (err) => {
          end();
          batch.forEach((b) => b.reject(err));
        },
      )
      .catch((err) => batch.forEach((b) => b.reject(err)));
  }
}
