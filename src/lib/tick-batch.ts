interface Waiting<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

/**
 * Gathers the items handed in during one turn of the event loop and serves them with one call of `run`
 * (one statement for many deliveries rather than one each), each caller getting its own result. `run`
 * answers with one result per item, in order; if it throws, every caller of that batch gets the error.
 */
export class TickBatch<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxItems = 256,
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const all = this.waiting;
    this.waiting = [];
    for (let start = 0; start < all.length; start += this.maxItems) {
      const batch = all.slice(start, start + this.maxItems);
      this.run(batch.map((entry) => entry.item)).then(
        (results) => batch.forEach((entry, k) => entry.resolve(results[k] as O)),
        (error: unknown) => batch.forEach((entry) => entry.reject(error)),
      );
    }
  }
}
