// The simulated fleet: every node's credential and the state its agent reports. The seed stores exactly this
// state, so a report is a change only when the bench flips one of a node's resources, and the node reports
// its new state from then on, as a real agent would.
import type { NodeSeed, Resource } from '../notify/seed.js';

const TUNNELS = 2;
const SERVICES = 3;
const DAY = 86_400_000;

export class SimulatedFleet {
  /** Per node and resource: 0 for the seeded state, 1 once flipped. */
  private readonly flipped: Uint8Array;
  private flips = 0;
  /** Every node once a pass; a stride prime to the size visits them in a fixed order that is not the seed's. */
  private readonly stride: number;
  /** Valid from a month ago for a year, so no expiry check is due. */
  readonly certificate: { not_before: string; not_after: string };

  constructor(
    readonly size: number,
    private readonly now: number,
    /** One pass of the fleet at the steady rate: the seeded last reports are spread over it. */
    private readonly passMs: number,
  ) {
    this.flipped = new Uint8Array(size * (TUNNELS + SERVICES));
    this.certificate = {
      not_before: new Date(now - 30 * DAY).toISOString(),
      not_after: new Date(now + 335 * DAY).toISOString(),
    };
    const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
    let stride = Math.floor(size * 0.618) || 1;
    while (gcd(stride, size) !== 1) stride += 1;
    this.stride = stride;
  }

  nodeAt = (k: number) => (k * this.stride) % this.size;
  token = (node: number) => `ewn_bench_${String(node).padStart(7, '0')}`;

  private addresses(node: number) {
    const [b, c, d] = [(node >> 16) & 255, (node >> 8) & 255, node & 255];
    return [
      { type: 'InternalIP', address: `10.${b}.${c}.${d}` },
      { type: 'ExternalIP', address: `198.${18 + (b & 1)}.${c}.${d}` },
    ];
  }

  private resources(node: number, kind: 'tunnel' | 'service'): Resource[] {
    const [count, offset, states] =
      kind === 'tunnel'
        ? [TUNNELS, 0, ['CONNECTED', 'TERMINATED']]
        : [SERVICES, TUNNELS, ['HEALTHY', 'UNHEALTHY']];
    return Array.from({ length: count }, (_, n) => ({
      key: `${kind}-${n}`,
      name: `${kind} ${n}`,
      state: states[this.flipped[node * (TUNNELS + SERVICES) + offset + n] ?? 0]!,
    }));
  }

  /** The report body the node's agent sends now: its whole state, as agents report it every time. */
  body(node: number): string {
    return JSON.stringify({
      addresses: this.addresses(node),
      software_version: '2.4.1',
      upgrade: { status: 'ENABLED' },
      certificate: this.certificate,
      tunnels: this.resources(node, 'tunnel'),
      services: this.resources(node, 'service').map(({ key, name, state }) => ({ key, name, status: state })),
    });
  }

  /** What the seed stores for node i: what its agent reports, last seen within one pass. */
  seed = (node: number): NodeSeed => ({
    token: this.token(node),
    name: `bench-node-${node}`,
    fields: {
      hardware_serial_number: `BENCH-${node}`,
      last_seen_at: this.now - Math.floor((node * this.passMs) / this.size),
      addresses: JSON.stringify(this.addresses(node)),
      software_version: '2.4.1',
      upgrade_status: 'ENABLED',
      cert_not_before: Date.parse(this.certificate.not_before),
      cert_not_after: Date.parse(this.certificate.not_after),
    },
    tunnels: this.resources(node, 'tunnel'),
    services: this.resources(node, 'service'),
  });

  /** One of the node's tunnels or services changes state (the next one in turn, fleet-wide). */
  flip(node: number): void {
    const index = node * (TUNNELS + SERVICES) + (this.flips % (TUNNELS + SERVICES));
    this.flipped[index] = 1 - (this.flipped[index] ?? 0);
    this.flips += 1;
  }
}
