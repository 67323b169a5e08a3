import type { StateChange } from '../events/repo.js';

export interface Band {
  state: string;
  from: number;
  to: number;
}

/**
 * A node's states over [from, to) as bands: `initial` until the first change, then each change's state until
 * the next. Neighbours of one state are one band; changes outside the window are clipped to it.
 */
export function stateBands(
  window: { from: number; to: number },
  initial: string,
  changes: readonly StateChange[],
): Band[] {
  const bands: Band[] = [];
  const add = (state: string, from: number, to: number) => {
    if (to <= from) return;
    const last = bands.at(-1);
    if (last !== undefined && last.state === state && last.to === from) last.to = to;
    else bands.push({ state, from, to });
  };
  let state = initial;
  let since = window.from;
  for (const change of changes) {
    const at = Math.min(Math.max(change.occurred_at, window.from), window.to);
    add(state, since, at);
    state = change.current_state;
    since = Math.max(since, at);
  }
  add(state, since, window.to);
  return bands;
}

/**
 * ALIVE time over the time the node was watched (ALIVE or UNREACHABLE), in percent with two decimals; NEW
 * time (registered, never reported) is not counted either way. null when the node was never watched.
 */
export function uptimePercent(bands: readonly Band[]): number | null {
  let alive = 0;
  let watched = 0;
  for (const band of bands) {
    if (band.state === 'NEW') continue;
    watched += band.to - band.from;
    if (band.state === 'ALIVE') alive += band.to - band.from;
  }
  return watched === 0 ? null : Math.round((alive / watched) * 10_000) / 100;
}
