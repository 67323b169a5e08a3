/** A tunnel's state as a report carries it; TERMINATED says why, for the agent's log. */
export type TunnelCheck = { state: 'CONNECTED' } | { state: 'TERMINATED'; reason: string };

export const connected = (): TunnelCheck => ({ state: 'CONNECTED' });
export const terminated = (reason: string): TunnelCheck => ({ state: 'TERMINATED', reason });
