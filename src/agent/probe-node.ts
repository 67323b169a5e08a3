import fs from 'node:fs/promises';
import os from 'node:os';
import net from 'node:net';
import type { AgentReport } from '../features/fleet/reports/schemas.js';
import { parseDefaultRouteInterface, pickAddresses } from './checks/addresses.js';
import { certificateValidity } from './checks/certificate.js';
import { osPrettyName } from './checks/os-release.js';
import type { ExternalIpConfig } from './config.js';

/** What a node check found, and what kept a part of it from being read. */
interface Found<T> {
  value: T | undefined;
  problem?: string;
}

const readText = (file: string) =>
  fs
    .readFile(file, 'utf8')
    .catch(
      (error: NodeJS.ErrnoException) => new Error(`cannot read ${file}: ${error.code ?? error.message}`),
    );

/**
 * Where the machine's own files are. EDGEWATCH_OS_RELEASE points elsewhere for an agent in a container that
 * reports on its host (the host's /etc/os-release mounted into it).
 */
export function osReleaseFiles(env: NodeJS.ProcessEnv): string[] {
  return env.EDGEWATCH_OS_RELEASE ? [env.EDGEWATCH_OS_RELEASE] : ['/etc/os-release', '/usr/lib/os-release'];
}

/** InternalIP: the address on the interface of the default route, else the first that looks like the LAN's. */
export async function internalAddress(): Promise<Found<string>> {
  const routes = await readText('/proc/net/route');
  const route = routes instanceof Error ? undefined : parseDefaultRouteInterface(routes);
  const defaultInterface = route !== undefined && 'value' in route ? route.value : undefined;
  const address = pickAddresses(os.networkInterfaces(), defaultInterface);
  return address === undefined
    ? { value: undefined, problem: 'no address on any interface' }
    : { value: address };
}

/** The software version: the configured one, else the system's PRETTY_NAME (cut to the report's 64 characters). */
export async function softwareVersion(
  configured: string | undefined,
  files: readonly string[],
): Promise<Found<string>> {
  if (configured !== undefined) return { value: configured };
  const problems: string[] = [];
  for (const file of files) {
    const text = await readText(file);
    if (text instanceof Error) {
      problems.push(text.message);
      continue;
    }
    const name = osPrettyName(text)?.trim();
    if (name) return { value: name.slice(0, 64) };
    problems.push(`${file} names no PRETTY_NAME or NAME`);
  }
  return { value: undefined, problem: problems.join('; ') };
}

export async function certificate(file: string | undefined): Promise<Found<AgentReport['certificate']>> {
  if (file === undefined) return { value: undefined };
  const pem = await readText(file);
  if (pem instanceof Error) return { value: undefined, problem: pem.message };
  const validity = certificateValidity(pem);
  return 'error' in validity
    ? { value: undefined, problem: `${file}: ${validity.error}` }
    : { value: validity.value };
}

/** How long an ExternalIP read from a URL is kept: an echo service is not asked at every check. */
const EXTERNAL_IP_TTL_MS = 300_000;

/** ExternalIP: the configured address, or the one a URL echoes (kept for 5 minutes, the last one on failure). */
export class ExternalAddress {
  private last: { address: string; at: number } | undefined;

  constructor(
    private readonly config: ExternalIpConfig | undefined,
    private readonly timeoutMs: number,
  ) {}

  async read(): Promise<Found<string>> {
    const { config } = this;
    if (config === undefined) return { value: undefined };
    if ('address' in config) return { value: config.address };
    if (this.last !== undefined && performance.now() - this.last.at < EXTERNAL_IP_TTL_MS)
      return { value: this.last.address };
    try {
      const response = await fetch(config.url, { signal: AbortSignal.timeout(this.timeoutMs) });
      const text = (await response.text()).trim();
      if (!response.ok) throw new Error(`answered ${response.status}`);
      if (net.isIP(text) === 0) throw new Error('did not answer with an address');
      this.last = { address: text, at: performance.now() };
      return { value: text };
    } catch (error) {
      const problem = `${config.url}: ${error instanceof Error ? error.message : String(error)}`;
      return { value: this.last?.address, problem };
    }
  }
}
