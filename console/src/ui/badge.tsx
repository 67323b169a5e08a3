const TONES: Record<string, string> = {
  ALIVE: 'good',
  CONNECTED: 'good',
  HEALTHY: 'good',
  delivered: 'good',
  SUCCESS: 'good',
  active: 'warn',
  enabled: 'good',
  UNREACHABLE: 'bad',
  TERMINATED: 'bad',
  UNHEALTHY: 'bad',
  failed: 'bad',
  expired: 'bad',
  FAILED: 'bad',
  failing: 'bad',
  gone: 'bad',
  held: 'warn',
  pending: 'info',
  upcoming: 'info',
  NEW: 'info',
  // Incidents: open trouble, and their members' changes.
  firing: 'bad',
  resolved: 'good',
  new: 'bad',
  recovered: 'good',
  unverified: 'warn',
  edited: 'warn',
  suppressed: 'quiet',
  ended: 'quiet',
  cancelled: 'quiet',
};

/** A state in words and colour (never colour alone). */
export function Badge({ state }: { state: string }) {
  return <span className={`badge badge-${TONES[state] ?? 'quiet'}`}>{state.replaceAll('_', ' ')}</span>;
}
