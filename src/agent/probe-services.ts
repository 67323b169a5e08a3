import net from 'node:net';
import { nextServiceStatus, parseUnitState, type ServiceCheck } from './checks/systemd.js';
import type { HttpService, ServiceConfig, TcpService } from './config.js';
import { exitsZero, runTool } from './exec.js';

/**
 * Each service's status now. A systemd unit that is starting or stopping keeps its last status for a while,
 * so the last check of each is kept, by key.
 */
export class ServiceChecks {
  private readonly last = new Map<string, ServiceCheck>();

  constructor(private readonly timeoutMs: number) {}

  check(services: readonly ServiceConfig[]): Promise<ServiceCheck[]> {
    return Promise.all(
      services.map(async (service) => {
        const result = await this.checkOne(service);
        this.last.set(service.key, result);
        return result;
      }),
    );
  }

  private async checkOne(service: ServiceConfig): Promise<ServiceCheck> {
    switch (service.type) {
      case 'systemd': {
        const args = ['show', '-p', 'LoadState,ActiveState,SubState', service.unit];
        const output = await runTool('systemctl', args, this.timeoutMs);
        const unit = 'error' in output ? output : parseUnitState(output.stdout);
        const previous = this.last.get(service.key) ?? { status: 'UNHEALTHY' as const };
        return nextServiceStatus(unit, previous, performance.now());
      }
      case 'http':
        return verdict(await httpProblem(service, this.timeoutMs));
      case 'tcp':
        return verdict(await tcpProblem(service, this.timeoutMs));
      case 'command':
        return verdict(await exitsZero(service.command, this.timeoutMs));
    }
  }
}

const verdict = (problem: string | undefined): ServiceCheck =>
  problem === undefined ? { status: 'HEALTHY' } : { status: 'UNHEALTHY', reason: problem };

async function httpProblem(service: HttpService, timeoutMs: number): Promise<string | undefined> {
  try {
    const response = await fetch(service.url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    await response.body?.cancel();
    return response.status === service.expect
      ? undefined
      : `${service.url} answered ${response.status}, not ${service.expect}`;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return `${service.url}: ${cause ?? (error instanceof Error ? error.message : String(error))}`;
  }
}

function tcpProblem(service: TcpService, timeoutMs: number): Promise<string | undefined> {
  const target = `${service.host.includes(':') ? `[${service.host}]` : service.host}:${service.port}`;
  return new Promise((resolve) => {
    const socket = net.connect({ host: service.host, port: service.port });
    const finish = (problem: string | undefined) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(timeoutMs, () => finish(`${target} did not accept a connection in time`));
    socket.on('connect', () => finish(undefined));
    socket.on('error', (error: NodeJS.ErrnoException) => finish(`${target}: ${error.code ?? error.message}`));
  });
}
