interface Waiting<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

/**
 * Gathers the items handed in during one turn of the event loop and serves them with one call of `run`
 * (one statement for many deliveries rather than one each), each caller getting its own result. `run`
 * answers with one result per item, in order; if it throws, every caller of that batch gets the error.
 * With `gather: 'now'` only the items handed in by the code running now (and the promise callbacks it
 * queued) are gathered: for callers that all ask at once, which then need not wait for the rest of the
 * turn (an HTTP answer being written, say). With `oneAtATime`, a batch waits for the one running, then
 * takes every item handed in meanwhile: for batches that write the same rows, which would only wait for
 * each other, and whose size then follows the load.
 */
export class TickBatch<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private scheduled = false;
  private running = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: { maxItems?: number; gather?: 'turn' | 'now'; oneAtATime?: boolean } = {},
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || (this.options.oneAtATime === true && this.running)) return;
    this.scheduled = true;
    if (this.options.gather === 'now') queueMicrotask(() => this.flush());
    else setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const size = this.options.maxItems ?? 256;
    const all = this.options.oneAtATime === true ? this.waiting.splice(0, size) : this.waiting.splice(0);
    for (let start = 0; start < all.length; start += size) {
      const batch = all.slice(start, start + size);
      this.running = true;
      this.run(batch.map((entry) => entry.item))
        .then(
          (results) => batch.forEach((entry, k) => entry.resolve(results[k] as O)),
          (error: unknown) => batch.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          this.running = false;
          if (this.waiting.length > 0) this.schedule();
        });
    }
  }
}
