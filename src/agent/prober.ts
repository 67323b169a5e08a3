import type { AgentReport } from '../features/fleet/reports/schemas.js';
import type { AgentConfig } from './config.js';
import { ProblemLog, type AgentLog } from './log.js';
import {
  certificate,
  ExternalAddress,
  internalAddress,
  osReleaseFiles,
  softwareVersion,
} from './probe-node.js';
import { ServiceChecks } from './probe-services.js';
import { checkTunnels } from './probe-tunnels.js';

/** A tool, socket or URL that does not answer within this is counted as down. */
const CHECK_TIMEOUT_MS = 5_000;

/**
 * The device's state as a report, read from its own sources at each check. A check that cannot run (a
 * missing tool, unreadable output, a timeout) reports its item UNHEALTHY or TERMINATED and says why in
 * the log once per change; a node fact that cannot be read is left out. Nothing here stops the report.
 */
export class Prober {
  private readonly problems: ProblemLog;
  private readonly services: ServiceChecks;
  private readonly external: ExternalAddress;
  private readonly osRelease: string[];
  private readonly timeoutMs: number;

  constructor(
    private readonly config: AgentConfig,
    log: AgentLog,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.problems = new ProblemLog(log);
    this.timeoutMs = Math.min(CHECK_TIMEOUT_MS, config.checkSeconds * 1_000);
    this.services = new ServiceChecks(this.timeoutMs);
    this.external = new ExternalAddress(config.externalIp, this.timeoutMs);
    this.osRelease = osReleaseFiles(env);
  }

  async probe(): Promise<AgentReport> {
    const { config } = this;
    const [internal, external, version, validity, tunnels, services] = await Promise.all([
      internalAddress(),
      this.external.read(),
      softwareVersion(config.softwareVersion, this.osRelease),
      certificate(config.certificate),
      checkTunnels(config.tunnels, this.timeoutMs),
      this.services.check(config.services),
    ]);
    this.problems.set('addresses', internal.problem);
    this.problems.set('external_ip', external.problem);
    this.problems.set('software_version', version.problem);
    this.problems.set('certificate', validity.problem);
    const report: AgentReport = {};
    const addresses = [
      ...(internal.value === undefined ? [] : [{ type: 'InternalIP' as const, address: internal.value }]),
      ...(external.value === undefined ? [] : [{ type: 'ExternalIP' as const, address: external.value }]),
    ];
    if (addresses.length > 0) report.addresses = addresses;
    if (version.value !== undefined) report.software_version = version.value;
    if (validity.value !== undefined) report.certificate = validity.value;
    if (config.tunnels.length > 0)
      report.tunnels = config.tunnels.map(({ key, name }, i) => {
        const check = tunnels[i]!;
        this.problems.set(`tunnel ${name}`, 'reason' in check ? check.reason : undefined);
        return { key, name, state: check.state };
      });
    if (config.services.length > 0)
      report.services = config.services.map(({ key, name }, i) => {
        const check = services[i]!;
        this.problems.set(`service ${name}`, check.status === 'HEALTHY' ? undefined : check.reason);
        return { key, name, status: check.status };
      });
    return report;
  }
}
