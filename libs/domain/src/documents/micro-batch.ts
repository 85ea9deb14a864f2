/**
 * Calls made in the same turn of the event loop, run together: `run` gets their inputs and answers
 * one output per input, in order. A batch runs on the next setImmediate, or at once when it reaches
 * `maxSize`. If `run` fails, every call of its batch fails with that error.
 */
export class MicroBatch<I, O> {
  private pending: Array<{ input: I; resolve: (output: O) => void; reject: (err: unknown) => void }> = [];

  constructor(
    private readonly run: (inputs: I[]) => Promise<O[]>,
    private readonly maxSize = 50,
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length >= this.maxSize) this.flush();
      else if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    let outputs: Promise<O[]>;
    try {
      outputs = this.run(batch.map((b) => b.input));
    } catch (err) {
      outputs = Promise.reject(err);
    }
    outputs.then(
      (results) => batch.forEach((b, i) => b.resolve(results[i])),
      (err: unknown) => batch.forEach((b) => b.reject(err)),
    );
  }
}
