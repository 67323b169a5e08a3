// The simulated fleet: each node's token and the state its agent reports, which the seed stores; a report is
// a change only when the bench flips one of the node's resources, which the node reports from then on.
import type { NodeSeed, Resource } from '../notify/seed.js';

/** A node's resources in order, each with its two states, the seeded one first. */
const RESOURCES = [
  ...[0, 1].map((n) => ({ kind: 'tunnel', n, states: ['CONNECTED', 'TERMINATED'] }) as const),
  ...[0, 1, 2].map((n) => ({ kind: 'service', n, states: ['HEALTHY', 'UNHEALTHY'] }) as const),
];
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** `size` nodes, seen last within one pass (`passMs`, the fleet at the steady rate) before `now`. */
export function simulatedFleet(size: number, now: number, passMs: number) {
  /** Per node and resource: 0 for the seeded state, 1 once flipped. */
  const flipped = new Uint8Array(size * RESOURCES.length);
  /** Every node once a pass: a stride prime to the size, in a fixed order that is not the seed's. */
  let stride = Math.floor(size * 0.618) || 1;
  while (gcd(stride, size) !== 1) stride += 1;
  /** Valid from a month ago for a year, so no expiry check is due. */
  const inDays = (days: number) => new Date(now + days * 86_400_000).toISOString();
  const certificate = { not_before: inDays(-30), not_after: inDays(335) };
  const addresses = (node: number) => {
    const [b, c, d] = [(node >> 16) & 255, (node >> 8) & 255, node & 255];
    return [
      { type: 'InternalIP', address: `10.${b}.${c}.${d}` },
      { type: 'ExternalIP', address: `198.${18 + (b & 1)}.${c}.${d}` },
    ];
  };
  const resources = (node: number, of: 'tunnel' | 'service'): Resource[] =>
    RESOURCES.flatMap(({ kind, n, states }, i) => {
      const state = states[flipped[node * RESOURCES.length + i]!]!;
      return kind === of ? [{ key: `${kind}-${n}`, name: `${kind} ${n}`, state }] : [];
    });
  const fleet = {
    token: (node: number) => `ewn_bench_${String(node).padStart(7, '0')}`,
    changes: 0,
    nodeAt: (k: number) => (k * stride) % size,
    /** The report body the node's agent sends now: its whole state, as agents report it every time. */
    body: (node: number) =>
      JSON.stringify({
        addresses: addresses(node),
        software_version: '2.4.1',
        upgrade: { status: 'ENABLED' },
        certificate,
        tunnels: resources(node, 'tunnel'),
        services: resources(node, 'service').map(({ key, name, state }) => ({ key, name, status: state })),
      }),
    seed: (node: number): NodeSeed => ({
      token: fleet.token(node),
      name: `bench-node-${node}`,
      fields: {
        hardware_serial_number: `BENCH-${node}`,
        last_seen_at: now - Math.floor((node * passMs) / size),
        addresses: JSON.stringify(addresses(node)),
        software_version: '2.4.1',
        upgrade_status: 'ENABLED',
        cert_not_before: Date.parse(certificate.not_before),
        cert_not_after: Date.parse(certificate.not_after),
      },
      tunnels: resources(node, 'tunnel'),
      services: resources(node, 'service'),
    }),
    /** One of the node's tunnels or services changes state (the next one in turn, fleet-wide). */
    flip(node: number) {
      flipped[node * RESOURCES.length + (fleet.changes % RESOURCES.length)]! ^= 1;
      fleet.changes += 1;
    },
  };
  return fleet;
}
