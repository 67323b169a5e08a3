import type { SimulatedNode } from './registry.js';

type TunnelState = 'CONNECTED' | 'TERMINATED';
type ServiceStatus = 'HEALTHY' | 'UNHEALTHY' | 'TERMINATED';

interface Tunnel {
  key: string;
  name: string;
  state: TunnelState;
  peer_node_id?: string;
}

interface Service {
  key: string;
  name: string;
  status: ServiceStatus;
}

/** The report body, as POST /api/v1/agent/report takes it. */
export interface ReportBody {
  addresses?: { type: 'InternalIP' | 'ExternalIP'; address: string }[];
  software_version?: string;
  tunnels: Tunnel[];
  services: Service[];
}

export const SOFTWARE_VERSION = '2.4.1-sim';
const SERVICE_NAMES = ['edge-proxy', 'metrics-agent', 'log-shipper'];

/**
 * One simulated node's agent. Its first report introduces the node (addresses, software version, every
 * tunnel and service, all up); each later one carries the full lists again, where each tunnel and service
 * that is up goes down with probability `flapRate`, and one that is down comes back: a flap lasts one
 * interval. A report that was not accepted changes nothing the service knows, so the next one introduces
 * the node again if the first never arrived.
 */
export class SimulatedAgent {
  busy = false;
  private introduced = false;
  private readonly tunnels: Tunnel[];
  private readonly services: Service[];

  constructor(
    readonly node: SimulatedNode,
    peer: SimulatedNode | undefined,
    private readonly flapRate: number,
    private readonly random: () => number = Math.random,
  ) {
    this.tunnels = [{ key: 'uplink', name: 'uplink', state: 'CONNECTED' }];
    if (peer !== undefined) {
      this.tunnels.push({
        key: 'mesh',
        name: `mesh to ${peer.name}`,
        state: 'CONNECTED',
        peer_node_id: peer.id,
      });
    }
    this.services = SERVICE_NAMES.map((name) => ({ key: name, name, status: 'HEALTHY' }));
  }

  get token(): string {
    return this.node.token;
  }

  /** The next report's body; flaps are decided here. */
  nextReport(): ReportBody {
    if (!this.introduced) {
      return {
        addresses: addressesOf(this.node.index),
        software_version: SOFTWARE_VERSION,
        tunnels: this.tunnels.map((tunnel) => ({ ...tunnel })),
        services: this.services.map((service) => ({ ...service })),
      };
    }
    for (const tunnel of this.tunnels) {
      if (tunnel.state !== 'CONNECTED') tunnel.state = 'CONNECTED';
      else if (this.flaps()) tunnel.state = 'TERMINATED';
    }
    for (const service of this.services) {
      if (service.status !== 'HEALTHY') service.status = 'HEALTHY';
      else if (this.flaps()) service.status = this.random() < 0.75 ? 'UNHEALTHY' : 'TERMINATED';
    }
    return {
      tunnels: this.tunnels.map((tunnel) => ({ ...tunnel })),
      services: this.services.map((service) => ({ ...service })),
    };
  }

  /** The service accepted a report. */
  accepted(): void {
    this.introduced = true;
  }

  private flaps(): boolean {
    return this.flapRate > 0 && this.random() < this.flapRate;
  }
}

/** A private address in 10.0.0.0/8 unique per node, and a public one from a documentation range. */
export function addressesOf(index: number): NonNullable<ReportBody['addresses']> {
  return [
    { type: 'InternalIP', address: `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}` },
    { type: 'ExternalIP', address: `203.0.113.${(index % 254) + 1}` },
  ];
}
