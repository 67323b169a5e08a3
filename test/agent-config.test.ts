import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentConfigError, loadAgentConfig, readToken, type AgentConfig } from '../src/agent/config.js';

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'edgewatch-agent-config-'));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

let files = 0;
function write(text: string, extension = 'yaml'): string {
  const file = path.join(directory, `${++files}.${extension}`);
  fs.writeFileSync(file, text);
  return file;
}

const PEER = Buffer.alloc(32, 7).toString('base64');
const MINIMAL = { server: 'https://edgewatch.example.com', token_file: '/etc/edgewatch/token' };
const NO_ENV = {};

/** A config of MINIMAL and `settings`, written as JSON (which is YAML too). */
const withSettings = (settings: object) => write(JSON.stringify({ ...MINIMAL, ...settings }), 'json');

function refusal(file: string | undefined, env: NodeJS.ProcessEnv = NO_ENV): AgentConfigError {
  try {
    loadAgentConfig(file, env);
  } catch (error) {
    expect(error).toBeInstanceOf(AgentConfigError);
    return error as AgentConfigError;
  }
  throw new Error(`the config in ${file} was accepted`);
}

const EXAMPLE = `
server: https://edgewatch.example.com/
token_file: /etc/edgewatch/token          # 0600; or $CREDENTIALS_DIRECTORY/token under systemd
heartbeat_seconds: 30                     # default: the server's report_interval_s
check_seconds: 10
max_backoff_seconds: 300
state_dir: /var/lib/edgewatch-agent
certificate: /etc/edge/node.crt
software_version: "gateway 4.2"           # optional; else os-release
external_ip: { url: "https://ip.example.com/" }
tunnels:
  - { name: hq, wireguard: { interface: wg0, peer: "${PEER}", max_handshake_age_seconds: 180 } }
  - { name: dc2, ipsec: dc2 }
  - { name: vpn, openvpn: { status_file: /run/openvpn/server.status } }
  - { name: vpn2, key: vpn-mgmt, openvpn: { management: /run/openvpn/mgmt.sock } }
services:
  - { name: mqtt, systemd: mosquitto.service }
  - { name: api, http: { url: "http://127.0.0.1:8080/healthz", expect: 200 } }
  - { name: db, tcp: "127.0.0.1:5432" }
  - { name: db6, tcp: "[::1]:5432" }
  - { name: app, command: ["/usr/local/bin/check-app", "--quiet"] }
`;

const EXAMPLE_CONFIG: AgentConfig = {
  server: 'https://edgewatch.example.com',
  tokenFile: '/etc/edgewatch/token',
  heartbeatSeconds: 30,
  checkSeconds: 10,
  maxBackoffSeconds: 300,
  stateDir: '/var/lib/edgewatch-agent',
  certificate: '/etc/edge/node.crt',
  softwareVersion: 'gateway 4.2',
  externalIp: { url: 'https://ip.example.com/' },
  tunnels: [
    { name: 'hq', key: 'hq', type: 'wireguard', interface: 'wg0', peer: PEER, maxHandshakeAgeSeconds: 180 },
    { name: 'dc2', key: 'dc2', type: 'ipsec', connection: 'dc2' },
    { name: 'vpn', key: 'vpn', type: 'openvpn', statusFile: '/run/openvpn/server.status' },
    { name: 'vpn2', key: 'vpn-mgmt', type: 'openvpn', management: '/run/openvpn/mgmt.sock' },
  ],
  services: [
    { name: 'mqtt', key: 'mqtt', type: 'systemd', unit: 'mosquitto.service' },
    { name: 'api', key: 'api', type: 'http', url: 'http://127.0.0.1:8080/healthz', expect: 200 },
    { name: 'db', key: 'db', type: 'tcp', host: '127.0.0.1', port: 5432 },
    { name: 'db6', key: 'db6', type: 'tcp', host: '::1', port: 5432 },
    { name: 'app', key: 'app', type: 'command', command: ['/usr/local/bin/check-app', '--quiet'] },
  ],
};

describe('loading', () => {
  it('reads the documented example', () => {
    expect(loadAgentConfig(write(EXAMPLE), NO_ENV)).toEqual(EXAMPLE_CONFIG);
  });

  it('accepts JSON', () => {
    const json = JSON.stringify({
      ...MINIMAL,
      tunnels: [{ name: 'dc2', ipsec: 'dc2' }],
      services: [{ name: 'api', http: { url: 'http://127.0.0.1:8080/healthz' } }],
    });
    const config = loadAgentConfig(write(json, 'json'), NO_ENV);
    expect(config.tunnels).toEqual([EXAMPLE_CONFIG.tunnels[1]]);
    expect(config.services).toEqual([EXAMPLE_CONFIG.services[1]]);
  });

  it('fills in the defaults', () => {
    const file = withSettings({
      tunnels: [{ name: 'hq', wireguard: { interface: 'wg0', peer: PEER } }],
      services: [{ name: 'api', key: 'api-health', http: { url: 'https://api.example.com' } }],
    });
    expect(loadAgentConfig(file, NO_ENV)).toEqual({
      server: 'https://edgewatch.example.com',
      tokenFile: '/etc/edgewatch/token',
      heartbeatSeconds: undefined,
      checkSeconds: 10,
      maxBackoffSeconds: 300,
      stateDir: '/var/lib/edgewatch-agent',
      certificate: undefined,
      softwareVersion: undefined,
      externalIp: undefined,
      tunnels: [EXAMPLE_CONFIG.tunnels[0]],
      services: [
        { name: 'api', key: 'api-health', type: 'http', url: 'https://api.example.com/', expect: 200 },
      ],
    });
  });

  it('takes a fixed external address, and empty settings as unset', () => {
    const file = withSettings({ external_ip: '203.0.113.7' });
    expect(loadAgentConfig(file, NO_ENV).externalIp).toEqual({ address: '203.0.113.7' });
    const empty = write(
      'server: https://e.example.com/base/\ntoken_file: /t\nheartbeat_seconds:\ntunnels:\n',
    );
    expect(loadAgentConfig(empty, NO_ENV)).toMatchObject({
      server: 'https://e.example.com/base',
      heartbeatSeconds: undefined,
      tunnels: [],
    });
  });
});

describe('the environment', () => {
  it('overrides the server and the token file', () => {
    const config = loadAgentConfig(write(EXAMPLE), {
      EDGEWATCH_SERVER: 'http://10.0.0.1:8080/',
      EDGEWATCH_TOKEN_FILE: 'relative/token',
    });
    expect(config.server).toBe('http://10.0.0.1:8080');
    expect(config.tokenFile).toBe(path.resolve('relative/token'));
    expect(config.services).toEqual(EXAMPLE_CONFIG.services);
  });

  it('is enough without a config file', () => {
    const env = { EDGEWATCH_SERVER: 'https://edgewatch.example.com', EDGEWATCH_TOKEN_FILE: '/run/token' };
    expect(loadAgentConfig(undefined, env)).toMatchObject({
      server: 'https://edgewatch.example.com',
      tokenFile: '/run/token',
      tunnels: [],
      services: [],
    });
    expect(refusal(undefined, { EDGEWATCH_TOKEN_FILE: '/run/token' }).message).toMatch(
      /^server: is required .*EDGEWATCH_SERVER/,
    );
  });

  it("takes systemd's credential and state directories over the file's", () => {
    const credentials = fs.mkdtempSync(path.join(os.tmpdir(), 'edgewatch-credentials-'));
    const systemd = { CREDENTIALS_DIRECTORY: credentials, STATE_DIRECTORY: '/x:/y' };
    const bare = write('server: https://edgewatch.example.com\n');
    // No credential named token: the file's token_file, or none.
    expect(loadAgentConfig(write(EXAMPLE), systemd)).toMatchObject({
      tokenFile: '/etc/edgewatch/token',
      stateDir: '/x',
    });
    const missing = refusal(bare, systemd);
    expect(missing.message).toBe(
      `${bare}: token_file: is required (in the config file, EDGEWATCH_TOKEN_FILE, or a systemd credential named token)`,
    );
    expect(missing.field).toBe('token_file');
    fs.writeFileSync(path.join(credentials, 'token'), 'ewn_token\n');
    const fromUnit = { tokenFile: path.join(credentials, 'token'), stateDir: '/x' };
    expect(loadAgentConfig(bare, systemd)).toMatchObject(fromUnit);
    expect(loadAgentConfig(write(EXAMPLE), systemd)).toMatchObject(fromUnit);
    expect(loadAgentConfig(write(EXAMPLE), { ...systemd, EDGEWATCH_TOKEN_FILE: '/run/t' }).tokenFile).toBe(
      '/run/t',
    );
    fs.rmSync(credentials, { recursive: true, force: true });
  });

  it('is checked too, and named in the message', () => {
    expect(refusal(write(EXAMPLE), { EDGEWATCH_SERVER: 'edgewatch.example.com' }).message).toBe(
      'EDGEWATCH_SERVER: must be an http:// or https:// URL',
    );
  });

  it('may lack the server and the token file for a dry run', () => {
    const config = loadAgentConfig(undefined, NO_ENV, { credentials: false });
    expect(config).toMatchObject({ server: '', tokenFile: '', services: [] });
  });
});

describe('refusals', () => {
  const wireguard = (fields: object) => ({
    tunnels: [{ name: 'hq', wireguard: { interface: 'wg0', peer: PEER, ...fields } }],
  });
  const service = (check: object) => ({ services: [{ name: 'svc', ...check }] });
  const bad: [object, string][] = [
    [{ server: 'ftp://edgewatch.example.com' }, 'server: must be an http:// or https:// URL'],
    [{ server: 'https://edgewatch.example.com/?x=1' }, "server: must be the service's base URL"],
    [{ server: 42 }, 'server: must be a string'],
    [{ token_file: 'token' }, 'token_file: must be an absolute path'],
    [{ check_seconds: 0 }, 'check_seconds: must be between 1 and 86400'],
    [{ check_seconds: '10' }, 'check_seconds: must be a whole number'],
    [{ heartbeat_seconds: 2.5 }, 'heartbeat_seconds: must be a whole number'],
    [{ max_backoff_seconds: 1e9 }, 'max_backoff_seconds: must be between 1 and 86400'],
    [{ state_dir: 'state' }, 'state_dir: must be an absolute path'],
    [{ software_version: 'v'.repeat(65) }, 'software_version: must be 1 to 64 characters'],
    [{ external_ip: 'my address' }, 'external_ip: must be an IP address, or { url: ... }'],
    [{ external_ip: { url: 'file:///etc/ip' } }, 'external_ip.url: must be an http:// or https:// URL'],
    [{ tunnels: { hq: {} } }, 'tunnels: must be a list'],
    [{ tunnels: ['hq'] }, 'tunnels[0]: must be a mapping'],
    [{ tunnels: [{ ipsec: 'dc2' }] }, 'tunnels[0].name: is required'],
    [{ tunnels: [{ name: 'n'.repeat(129), ipsec: 'dc2' }] }, 'tunnels[0].name: must be 1 to 128 characters'],
    [{ tunnels: [{ name: 'dc2', key: '', ipsec: 'dc2' }] }, 'tunnels[0].key: must be 1 to 128 characters'],
    [
      { tunnels: [{ name: 'dc2', ipsec: 'dc2' }, ...wireguard({ interface: 7 }).tunnels] },
      'tunnels[1].wireguard.interface: must be a string',
    ],
    [wireguard({ interface: 'wg-with-a-long-name' }), 'tunnels[0].wireguard.interface: must be 1 to 15'],
    [wireguard({ interface: '-wg0' }), 'tunnels[0].wireguard.interface: must be one word'],
    [wireguard({ peer: undefined }), 'tunnels[0].wireguard.peer: is required'],
    [wireguard({ peer: '<public key>' }), "tunnels[0].wireguard.peer: must be the peer's public key"],
    [wireguard({ max_handshake_age_seconds: 0 }), 'tunnels[0].wireguard.max_handshake_age_seconds: must be'],
    [{ tunnels: [{ name: 'dc2' }] }, 'tunnels[0]: must set exactly one of wireguard, ipsec, openvpn'],
    [
      { tunnels: [{ name: 'dc2', ipsec: 'dc2', openvpn: { management: '/m' } }] },
      'tunnels[0]: must set exactly one of wireguard, ipsec, openvpn',
    ],
    [{ tunnels: [{ name: 'dc2', ipsec: 'dc 2' }] }, 'tunnels[0].ipsec: must be one word'],
    [
      { tunnels: [{ name: 'vpn', openvpn: { status_file: '/s', management: '/m' } }] },
      'tunnels[0].openvpn: must set exactly one of status_file, management',
    ],
    [
      { tunnels: [{ name: 'vpn', openvpn: { status_file: 'server.status' } }] },
      'tunnels[0].openvpn.status_file: must be an absolute path',
    ],
    [
      service({ systemd: 'mosquitto.service', tcp: 'db:5432' }),
      'services[0]: must set exactly one of systemd, http, tcp, command',
    ],
    [service({ systemd: '--now' }), 'services[0].systemd: must be one word'],
    [service({ http: 'http://127.0.0.1/healthz' }), 'services[0].http: must be a mapping'],
    [service({ http: { expect: 200 } }), 'services[0].http.url: is required'],
    [
      service({ http: { url: 'ftp://127.0.0.1/' } }),
      'services[0].http.url: must be an http:// or https:// URL',
    ],
    [
      service({ http: { url: 'http://127.0.0.1/', expect: 999 } }),
      'services[0].http.expect: must be between 100 and 599',
    ],
    [service({ tcp: '127.0.0.1' }), 'services[0].tcp: must be "host:port"'],
    [service({ tcp: '::1:5432' }), 'services[0].tcp: must be "host:port"'],
    [service({ tcp: '[db]:5432' }), 'services[0].tcp: must be "host:port"'],
    [service({ tcp: 'db:65536' }), 'services[0].tcp: must be "host:port"'],
    [service({ command: '/usr/local/bin/check-app --quiet' }), 'services[0].command: must be a list'],
    [service({ command: [] }), 'services[0].command: must name the program to run'],
    [service({ command: ['/bin/check', 5] }), 'services[0].command[1]: must be a string'],
    [
      { services: Array.from({ length: 257 }, (_, i) => ({ name: `s${i}`, tcp: 'db:5432' })) },
      'services: must have at most 256 items',
    ],
  ];

  it.each(bad.map(([settings, message]) => ({ settings, message })))('$message', ({ settings, message }) => {
    const file = withSettings(settings);
    const error = refusal(file);
    expect(error.message).toContain(`${file}: ${message}`);
    expect(message).toContain(`${error.field}:`);
  });

  it.each([
    [{ servr: 'https://edgewatch.example.com' }, 'servr: is not a setting here (known: server, token_file,'],
    [wireguard({ max_handshake_age: 60 }), 'tunnels[0].wireguard.max_handshake_age: is not a setting here'],
    [service({ sytemd: 'mosquitto.service' }), 'services[0].sytemd: is not a setting here'],
    [service({ tcp: 'db:5432', timeout: 5 }), 'services[0].timeout: is not a setting here'],
    [
      service({ http: { url: 'http://127.0.0.1/', status: 204 } }),
      'services[0].http.status: is not a setting',
    ],
  ])('refuses the unknown field in %j', (settings, message) => {
    const file = withSettings(settings);
    expect(refusal(file).message).toContain(`${file}: ${message}`);
  });

  it('refuses a key used twice within tunnels or within services', () => {
    const twice = withSettings({
      services: [
        { name: 'db', tcp: 'db:5432' },
        { name: 'db', systemd: 'postgresql.service' },
      ],
    });
    expect(refusal(twice).message).toBe(
      `${twice}: services[1].name: the key "db" is already services[0]'s: keys must differ within services (set a distinct key)`,
    );
    const explicit = withSettings({
      tunnels: [
        { name: 'hq', ipsec: 'hq' },
        { name: 'hq backup', key: 'hq', ipsec: 'hq2' },
      ],
    });
    expect(refusal(explicit).message).toContain(
      `${explicit}: tunnels[1].key: the key "hq" is already tunnels[0]'s`,
    );
  });

  it('accepts a name twice with distinct keys, and a key shared by a tunnel and a service', () => {
    const file = withSettings({
      tunnels: [{ name: 'hq', ipsec: 'hq' }],
      services: [
        { name: 'hq', tcp: 'db:5432' },
        { name: 'hq', key: 'hq-systemd', systemd: 'hq.service' },
      ],
    });
    expect(loadAgentConfig(file, NO_ENV).services.map((item) => item.key)).toEqual(['hq', 'hq-systemd']);
  });

  it('says when the file cannot be read or is not YAML', () => {
    const missing = path.join(directory, 'missing.yaml');
    expect(refusal(missing).message).toBe(`cannot read the config file ${missing}: no such file`);
    expect(refusal(directory).message).toBe(`cannot read the config file ${directory}: it is a directory`);
    const broken = write('server: https://edgewatch.example.com\ntunnels: [\n  { name: hq\nservices: 1\n');
    expect(refusal(broken).message).toMatch(
      new RegExp(`^${broken}: not valid YAML: .* at line \\d+, column \\d+$`),
    );
    const twice = write('server: https://a.example.com\nserver: https://b.example.com\n');
    expect(refusal(twice).message).toBe(
      `${twice}: not valid YAML: Map keys must be unique at line 2, column 1`,
    );
    const list = write('- server: https://edgewatch.example.com\n');
    expect(refusal(list).message).toBe(`${list}: must be a mapping (name: value)`);
  });
});

describe('the token', () => {
  const SECRET = 'ewn_c2VjcmV0LXRva2VuLXRoYXQtbXVzdC1uZXZlci1zaG93';

  it('is read without the whitespace around it', () => {
    expect(readToken(write(`\n  ${SECRET} \r\n\n`, 'token'))).toBe(SECRET);
  });

  it.each([
    ['empty', ' \n', 'is empty'],
    ['of two lines', `${SECRET}\n${SECRET}\n`, "must hold the node's token alone, on one line"],
    ['with a space', `token ${SECRET}`, "must hold the node's token alone, on one line"],
  ])('is refused when %s, naming the file and not what it holds', (_, content, problem) => {
    const file = write(content, 'token');
    const error = (() => {
      try {
        readToken(file);
      } catch (error) {
        return error as AgentConfigError;
      }
      throw new Error('the token was accepted');
    })();
    expect(error).toBeInstanceOf(AgentConfigError);
    expect(error.message).toContain(`the token file ${file} ${problem}`);
    expect(error.message).not.toContain(SECRET);
  });

  it('says why it cannot be read', () => {
    const missing = path.join(directory, 'no-token');
    expect(() => readToken(missing)).toThrow(
      new AgentConfigError(`cannot read the token file ${missing}: no such file`, 'token_file'),
    );
  });
});
