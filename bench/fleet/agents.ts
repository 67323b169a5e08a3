// The simulated fleet: every node's credential and the state its agent reports. The seed stores exactly this
// state, so a report is a change only when the bench flips one of a node's resources, and the node reports
// its new state from then on, as a real agent would.

export const TUNNELS_PER_NODE = 2;
export const SERVICES_PER_NODE = 3;
const RESOURCES = TUNNELS_PER_NODE + SERVICES_PER_NODE;

const TUNNEL_STATES = ['CONNECTED', 'TERMINATED'] as const;
const SERVICE_STATES = ['HEALTHY', 'UNHEALTHY'] as const;

export const SOFTWARE_VERSION = '2.4.1';
export const UPGRADE_STATUS = 'ENABLED';

export interface Resource {
  key: string;
  name: string;
  state: string;
}

/** A small deterministic generator (mulberry32), so two runs send the same sequence of nodes. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class SimulatedFleet {
  /** Per node and resource: 0 for the seeded state, 1 once flipped. */
  private readonly flipped: Uint8Array;
  readonly certificate: { not_before: string; not_after: string };
  /** Every node once, in an order shuffled per run: node reports come round like a 30 s cycle. */
  private readonly order: Uint32Array;
  private flips = 0;

  constructor(
    readonly size: number,
    /** The certificate every agent reports: valid from a month ago for a year, so no expiry check is due. */
    now: number,
  ) {
    this.flipped = new Uint8Array(size * RESOURCES);
    const day = 86_400_000;
    this.certificate = {
      not_before: new Date(now - 30 * day).toISOString(),
      not_after: new Date(now + 335 * day).toISOString(),
    };
    this.order = new Uint32Array(size);
    for (let i = 0; i < size; i += 1) this.order[i] = i;
    const random = seededRandom(0x5eed);
    for (let i = size - 1; i > 0; i -= 1) {
      const j = Math.floor(random() * (i + 1));
      const swap = this.order[i] ?? 0;
      this.order[i] = this.order[j] ?? 0;
      this.order[j] = swap;
    }
  }

  /** The node sending the k-th report of the steady stream. */
  nodeAt(k: number): number {
    return this.order[k % this.size] ?? 0;
  }

  token(node: number): string {
    return `ewn_bench_${String(node).padStart(7, '0')}`;
  }

  name(node: number): string {
    return `bench-node-${node}`;
  }

  addresses(node: number): { type: 'InternalIP' | 'ExternalIP'; address: string }[] {
    const [b, c, d] = [(node >> 16) & 255, (node >> 8) & 255, node & 255];
    return [
      { type: 'InternalIP', address: `10.${b}.${c}.${d}` },
      { type: 'ExternalIP', address: `198.${18 + (b & 1)}.${c}.${d}` },
    ];
  }

  tunnels(node: number): Resource[] {
    return Array.from({ length: TUNNELS_PER_NODE }, (_, n) => ({
      key: `tun-${n}`,
      name: `tunnel ${n}`,
      state: TUNNEL_STATES[this.flipped[node * RESOURCES + n] ?? 0] ?? 'CONNECTED',
    }));
  }

  services(node: number): Resource[] {
    return Array.from({ length: SERVICES_PER_NODE }, (_, n) => ({
      key: `svc-${n}`,
      name: `service ${n}`,
      state: SERVICE_STATES[this.flipped[node * RESOURCES + TUNNELS_PER_NODE + n] ?? 0] ?? 'HEALTHY',
    }));
  }

  /** The report body the node's agent sends now: its whole state, as agents report it every time. */
  body(node: number): string {
    return JSON.stringify({
      addresses: this.addresses(node),
      software_version: SOFTWARE_VERSION,
      upgrade: { status: UPGRADE_STATUS },
      certificate: this.certificate,
      tunnels: this.tunnels(node),
      services: this.services(node).map(({ key, name, state }) => ({ key, name, status: state })),
    });
  }

  /** One of the node's tunnels or services changes state (the next one in turn, fleet-wide). */
  flip(node: number): void {
    const index = node * RESOURCES + (this.flips % RESOURCES);
    this.flipped[index] = 1 - (this.flipped[index] ?? 0);
    this.flips += 1;
  }
}
