import fs from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { absolutePath, FieldProblem, Fields, httpUrl, seconds, text, type Parse } from './config-fields.js';
import {
  readExternalIp,
  readServices,
  readTunnels,
  type ExternalIpConfig,
  type ServiceConfig,
  type TunnelConfig,
} from './config-items.js';

export type * from './config-items.js';

export interface AgentConfig {
  /** The service's base URL, without a trailing slash. */
  server: string;
  tokenFile: string;
  /** Undefined: the server's report_interval_s. */
  heartbeatSeconds: number | undefined;
  checkSeconds: number;
  maxBackoffSeconds: number;
  /** Where a report not sent yet waits across restarts. */
  stateDir: string;
  /** The node's certificate, whose validity is reported. */
  certificate: string | undefined;
  /** Undefined: the one os-release names. */
  softwareVersion: string | undefined;
  /** Undefined: no ExternalIP is reported. */
  externalIp: ExternalIpConfig | undefined;
  tunnels: TunnelConfig[];
  services: ServiceConfig[];
}

/** The configuration or the token file is wrong: the agent exits with status 78, as a restart would not help. */
export class AgentConfigError extends Error {
  constructor(
    message: string,
    /** The setting at fault (`tunnels[1].wireguard.interface`, `EDGEWATCH_SERVER`), when it is one. */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'AgentConfigError';
  }
}

const DEFAULT_STATE_DIR = '/var/lib/edgewatch-agent';
const DEFAULT_CHECK_SECONDS = 10;
const DEFAULT_MAX_BACKOFF_SECONDS = 300;

const serverUrl: Parse<string> = (value, field) => {
  const url = httpUrl(value, field);
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw new FieldProblem(field, "must be the service's base URL, without query, fragment or credentials");
  return url.href.replace(/\/+$/, '');
};

type FileSettings = Omit<AgentConfig, 'server' | 'tokenFile' | 'stateDir'> &
  Partial<Pick<AgentConfig, 'server' | 'tokenFile' | 'stateDir'>>;

function readSettings(settings: unknown): FileSettings {
  const fields = Fields.of(settings, '', [
    'server',
    'token_file',
    'heartbeat_seconds',
    'check_seconds',
    'max_backoff_seconds',
    'state_dir',
    'certificate',
    'software_version',
    'external_ip',
    'tunnels',
    'services',
  ]);
  return {
    server: fields.optional('server', serverUrl),
    tokenFile: fields.optional('token_file', absolutePath),
    heartbeatSeconds: fields.optional('heartbeat_seconds', seconds),
    checkSeconds: fields.optional('check_seconds', seconds) ?? DEFAULT_CHECK_SECONDS,
    maxBackoffSeconds: fields.optional('max_backoff_seconds', seconds) ?? DEFAULT_MAX_BACKOFF_SECONDS,
    stateDir: fields.optional('state_dir', absolutePath),
    certificate: fields.optional('certificate', absolutePath),
    // The server takes at most 64 characters.
    softwareVersion: fields.optional('software_version', text(64)),
    externalIp: fields.optional('external_ip', readExternalIp),
    tunnels: fields.optional('tunnels', readTunnels) ?? [],
    services: fields.optional('services', readServices) ?? [],
  };
}

/**
 * The agent's configuration: the YAML (or JSON) file, if any, under EDGEWATCH_SERVER and EDGEWATCH_TOKEN_FILE;
 * under systemd, its credential `token` (in CREDENTIALS_DIRECTORY) and STATE_DIRECTORY win over the file's. Throws an AgentConfigError naming
 * the setting at fault. `credentials: false` is for a dry run, which sends nothing: the server and the token
 * file may then be missing, and are ''.
 */
export function loadAgentConfig(
  file: string | undefined,
  env: NodeJS.ProcessEnv,
  { credentials = true }: { credentials?: boolean } = {},
): AgentConfig {
  const settings = file === undefined ? readSettings({}) : inFile(file, () => readSettings(readYaml(file)));
  const required = (value: string | undefined, field: string, alternatives: string) => {
    if (value !== undefined || !credentials) return value ?? '';
    const where = file === undefined ? '' : `${file}: `;
    throw new AgentConfigError(`${where}${field}: is required (in the config file, ${alternatives})`, field);
  };
  const server = required(
    variable(env, 'EDGEWATCH_SERVER', serverUrl) ?? settings.server,
    'server',
    'or EDGEWATCH_SERVER',
  );
  const tokenFile = required(
    variable(env, 'EDGEWATCH_TOKEN_FILE', (value) => path.resolve(String(value))) ??
      systemdCredential(env) ??
      settings.tokenFile,
    'token_file',
    'EDGEWATCH_TOKEN_FILE, or a systemd credential named token',
  );
  // systemd lists its StateDirectory= directories separated by colons.
  const stateDirectory = variable(env, 'STATE_DIRECTORY', (value) => String(value).split(':')[0]);
  return {
    ...settings,
    server,
    tokenFile,
    // Under systemd its directory wins: it is the one the unit's dynamic user may write.
    stateDir: stateDirectory ?? settings.stateDir ?? DEFAULT_STATE_DIR,
  };
}

/**
 * Under systemd, the token the unit hands over (`LoadCredential=token:…`): a copy of the root-only file that
 * its dynamic user may read, so it wins over `token_file`, which names that root-only file.
 */
function systemdCredential(env: NodeJS.ProcessEnv): string | undefined {
  const credential = variable(env, 'CREDENTIALS_DIRECTORY', (value, name) =>
    path.join(absolutePath(value, name), 'token'),
  );
  return credential !== undefined && fs.existsSync(credential) ? credential : undefined;
}

/** The node's token, without the whitespace around it. The messages never show what the file holds. */
export function readToken(tokenFile: string): string {
  let token: string;
  try {
    token = fs.readFileSync(tokenFile, 'utf8').trim();
  } catch (error) {
    throw new AgentConfigError(
      `cannot read the token file ${tokenFile}: ${whyUnreadable(error)}`,
      'token_file',
    );
  }
  if (token === '')
    throw new AgentConfigError(
      `the token file ${tokenFile} is empty: put the node's token in it`,
      'token_file',
    );
  // Such a token could not be sent in a header, and the error saying so would show it.
  if (!/^[\x21-\x7e]+$/.test(token))
    throw new AgentConfigError(
      `the token file ${tokenFile} must hold the node's token alone, on one line: it has spaces or other characters no token has`,
      'token_file',
    );
  return token;
}

function readYaml(file: string): unknown {
  let source: string;
  try {
    source = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new AgentConfigError(`cannot read the config file ${file}: ${whyUnreadable(error)}`);
  }
  const document = parseDocument(source);
  const [syntaxError] = document.errors;
  if (syntaxError !== undefined) {
    // The first line says what and where ("… at line 3, column 5:"); a code frame follows.
    const what = syntaxError.message.split('\n')[0]!.replace(/:$/, '');
    throw new AgentConfigError(`${file}: not valid YAML: ${what}`);
  }
  try {
    const settings: unknown = document.toJS();
    // A file of comments only: every setting from its default or the environment.
    return settings ?? {};
  } catch (error) {
    throw new AgentConfigError(`${file}: ${(error as Error).message}`);
  }
}

function inFile<T>(file: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof FieldProblem) throw new AgentConfigError(`${file}: ${error.message}`, error.field);
    throw error;
  }
}

/** An environment variable, unset when empty. */
function variable<T>(env: NodeJS.ProcessEnv, name: string, parse: Parse<T>): T | undefined {
  const value = env[name]?.trim();
  if (value === undefined || value === '') return undefined;
  try {
    return parse(value, name);
  } catch (error) {
    if (error instanceof FieldProblem) throw new AgentConfigError(error.message, name);
    throw error;
  }
}

const READ_FAILURES: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'it is a directory',
};

function whyUnreadable(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  return (code === undefined ? undefined : READ_FAILURES[code]) ?? message;
}
