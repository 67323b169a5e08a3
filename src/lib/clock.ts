export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export function isoUtc(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
