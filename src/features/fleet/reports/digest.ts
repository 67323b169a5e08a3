import { createHash } from 'node:crypto';
import type { AgentReport } from './schemas.js';

const SECTIONS = ['addresses', 'software_version', 'upgrade', 'certificate', 'tunnels', 'services'] as const;
type Digests = Partial<Record<(typeof SECTIONS)[number], string>>;

/** A digest of each section the report carries (an empty report carries none). */
export function reportDigests(report: AgentReport): Digests {
  const digests: Digests = {};
  for (const section of SECTIONS) {
    const value = report[section];
    if (value !== undefined) {
      digests[section] = createHash('sha1').update(JSON.stringify(value)).digest('base64url');
    }
  }
  return digests;
}

function parse(stored: string | null): Digests {
  return stored === null ? {} : (JSON.parse(stored) as Digests);
}

/**
 * Whether applying the report would change nothing: every section it carries is the one applied last.
 * Sound because only applied reports write the digests, and whatever else changes a node's reported
 * state (forgetting a tunnel or a service) clears them.
 */
export function repeatsLastReport(stored: string | null, digests: Digests): boolean {
  const last = parse(stored);
  return Object.entries(digests).every(([section, digest]) => last[section as keyof Digests] === digest);
}

/** The stored digests with this report's sections replaced. */
export function withReport(stored: string | null, digests: Digests): string {
  return JSON.stringify({ ...parse(stored), ...digests });
}
