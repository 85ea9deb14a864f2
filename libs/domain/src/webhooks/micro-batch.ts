interface Pending<I, O> {
  item: I;
  resolve: (out: O) => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers the calls made within `waitMs` (0: in one turn of the event loop), up to `max`, into one
 * call of `run`, and answers each caller with its own result. Under load, dozens of concurrent
 * deliveries then share one database round trip instead of making one each; alone, a call waits
 * at most `waitMs`. `run` answers one result per item, in order.
 *
 * With `maxRuns`, at most that many calls of `run` are under way at once: calls made meanwhile wait
 * for one to end and then go together (at most `max` at a time), so the busier the target, the
 * larger the batches, while a call made when it is idle goes at once.
 */
export class MicroBatch<I, O> {
  private pending: Array<Pending<I, O>> = [];
  private scheduled = false;
  private running = 0;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly max = 200,
    private readonly waitMs = 0,
    private readonly maxRuns = Infinity,
  ) {}

  push(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.max && this.running < this.maxRuns) this.flush();
      else this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.maxRuns) return;
    this.scheduled = true;
    if (this.waitMs > 0) setTimeout(() => this.flush(), this.waitMs);
    else setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    if (this.running >= this.maxRuns) return; // the run that ends next takes them
    const batch = this.pending.splice(0, this.max);
    if (batch.length === 0) return;
    this.running++;
    let out: Promise<O[]>;
    try {
      out = this.run(batch.map((b) => b.item));
    } catch (err) {
      out = Promise.reject(err);
    }
    out
      .then(
        (outs) => {
          if (outs.length !== batch.length) throw new Error(`micro-batch: ${outs.length} results for ${batch.length} items`);
          batch.forEach((b, i) => b.resolve(outs[i]));
        },
        (err) => batch.forEach((b) => b.reject(err)),
      )
      .catch((err) => batch.forEach((b) => b.reject(err)))
      .finally(() => {
        this.running--;
        // Calls that waited for this run have waited long enough: they go now.
        if (this.pending.length > 0) this.flush();
      });
  }
}
