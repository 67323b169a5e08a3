export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export function isoUtc(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** isoUtc, keeping null (a time that has not come yet, or never will). */
export const isoUtcOrNull = (epochMs: number | null): string | null =>
  epochMs === null ? null : isoUtc(epochMs);
