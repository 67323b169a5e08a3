/** At most `limit` tasks at a time per key (a webhook); the others wait their turn, first come first served. */
export class PerKeyLimiter {
  private readonly slots = new Map<string, { active: number; waiting: (() => void)[] }>();

  constructor(private readonly limit: number) {}

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    let slot = this.slots.get(key);
    if (slot === undefined) this.slots.set(key, (slot = { active: 0, waiting: [] }));
    // A finishing task hands its place straight to the next in line, so nobody can slip in between.
    if (slot.active < this.limit) slot.active += 1;
    else await new Promise<void>((resolve) => slot.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = slot.waiting.shift();
      if (next !== undefined) next();
      else if ((slot.active -= 1) === 0) this.slots.delete(key);
    }
  }
}
