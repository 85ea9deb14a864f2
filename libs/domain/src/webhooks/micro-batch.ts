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
 */
export class MicroBatch<I, O> {
  private pending: Array<Pending<I, O>> = [];
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly max = 200,
    private readonly waitMs = 0,
  ) {}

  push(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.max) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        if (this.waitMs > 0) setTimeout(() => this.flush(), this.waitMs);
        else setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending.splice(0, this.pending.length);
    if (batch.length === 0) return;
    let outs: Promise<O[]>;
    try {
      outs = this.run(batch.map((b) => b.item));
    } catch (err) {
      // A `run` that throws before it returns a promise fails its batch, not the process (flush runs from a timer).
      outs = Promise.reject(err);
    }
    outs
      .then(
        (outs) => {
          if (outs.length !== batch.length) throw new Error(`micro-batch: ${outs.length} results for ${batch.length} items`);
          batch.forEach((b, i) => b.resolve(outs[i]));
        },
        (err) => batch.forEach((b) => b.reject(err)),
      )
      .catch((err) => batch.forEach((b) => b.reject(err)));
  }
}
