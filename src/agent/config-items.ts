import { isIP } from 'node:net';
import { MAX_RESOURCES_PER_REPORT } from '../features/fleet/reports/limits.js';
import {
  absolutePath,
  FieldProblem,
  Fields,
  hostPort,
  httpUrl,
  integer,
  isMapping,
  list,
  seconds,
  text,
  toolArgument,
  type Parse,
} from './config-fields.js';

interface Named {
  name: string;
  /** The report's key: the item's `key`, else its `name`. */
  key: string;
}

export interface WireGuardTunnel extends Named {
  type: 'wireguard';
  interface: string;
  /** The peer's public key, as `wg show` prints it. */
  peer: string;
  /** A peer whose latest handshake is older is down (WireGuard shakes hands every 2 minutes). */
  maxHandshakeAgeSeconds: number;
}
export interface IpsecTunnel extends Named {
  type: 'ipsec';
  connection: string;
}
/** Read from the status file OpenVPN writes, or asked on its management socket. */
export type OpenVpnTunnel = Named & { type: 'openvpn' } & ({ statusFile: string } | { management: string });
export type TunnelConfig = WireGuardTunnel | IpsecTunnel | OpenVpnTunnel;

export interface SystemdService extends Named {
  type: 'systemd';
  unit: string;
}
export interface HttpService extends Named {
  type: 'http';
  url: string;
  /** The status the check wants. */
  expect: number;
}
export interface TcpService extends Named {
  type: 'tcp';
  /** An IPv6 address without its brackets. */
  host: string;
  port: number;
}
export interface CommandService extends Named {
  type: 'command';
  /** The program and its arguments, run without a shell; healthy when it exits 0. */
  command: string[];
}
export type ServiceConfig = SystemdService | HttpService | TcpService | CommandService;

/** Where the node's ExternalIP comes from: a URL that answers with the address, or a fixed one. */
export type ExternalIpConfig = { url: string } | { address: string };

const DEFAULT_MAX_HANDSHAKE_AGE_SECONDS = 180;
const DEFAULT_HTTP_EXPECT = 200;
// The server's limit for a tunnel's or service's key and name.
const nameText = text(128);
// Linux interface names are at most 15 characters.
const interfaceName = toolArgument(15);
// Base64 of 32 bytes: the last character before `=` carries 2 bits and 4 zeros.
const WIREGUARD_KEY = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

const wireGuardKey: Parse<string> = (value, field) => {
  const key = text(44)(value, field);
  if (!WIREGUARD_KEY.test(key))
    throw new FieldProblem(
      field,
      "must be the peer's public key (44 characters of base64, as `wg show` prints it)",
    );
  return key;
};

/** What an item checks: the item without its name and key. */
type Check<Item> = Item extends Named ? Omit<Item, keyof Named> : never;

const tunnelKinds: Record<'wireguard' | 'ipsec' | 'openvpn', Parse<Check<TunnelConfig>>> = {
  wireguard: (value, field) => {
    const fields = Fields.of(value, field, ['interface', 'peer', 'max_handshake_age_seconds']);
    return {
      type: 'wireguard',
      interface: fields.required('interface', interfaceName),
      peer: fields.required('peer', wireGuardKey),
      maxHandshakeAgeSeconds:
        fields.optional('max_handshake_age_seconds', seconds) ?? DEFAULT_MAX_HANDSHAKE_AGE_SECONDS,
    };
  },
  ipsec: (value, field) => ({ type: 'ipsec', connection: toolArgument(128)(value, field) }),
  openvpn: (value, field) => {
    const fields = Fields.of(value, field, ['status_file', 'management']);
    return fields.oneOf(['status_file', 'management']) === 'status_file'
      ? { type: 'openvpn', statusFile: fields.required('status_file', absolutePath) }
      : { type: 'openvpn', management: fields.required('management', absolutePath) };
  },
};

const serviceKinds: Record<'systemd' | 'http' | 'tcp' | 'command', Parse<Check<ServiceConfig>>> = {
  systemd: (value, field) => ({ type: 'systemd', unit: toolArgument(256)(value, field) }),
  http: (value, field) => {
    const fields = Fields.of(value, field, ['url', 'expect']);
    return {
      type: 'http',
      url: fields.required('url', httpUrl).href,
      expect: fields.optional('expect', integer(100, 599)) ?? DEFAULT_HTTP_EXPECT,
    };
  },
  tcp: (value, field) => ({ type: 'tcp', ...hostPort(value, field) }),
  command: (value, field) => {
    if (typeof value === 'string')
      throw new FieldProblem(field, 'must be a list (the program, then its arguments): no shell runs it');
    const command = list()(value, field).map((word, i) => text(4096)(word, `${field}[${i}]`));
    if (command.length === 0) throw new FieldProblem(field, 'must name the program to run');
    return { type: 'command', command };
  },
};

export const readTunnels: Parse<TunnelConfig[]> = (value, field) => readItems(value, field, tunnelKinds);

export const readServices: Parse<ServiceConfig[]> = (value, field) => readItems(value, field, serviceKinds);

/** Each item says what it checks by the one field it sets: `{ name: db, tcp: "127.0.0.1:5432" }`. */
function readItems<Kind extends string, Item>(
  value: unknown,
  field: string,
  kinds: Record<Kind, Parse<Item>>,
): (Named & Item)[] {
  const names = Object.keys(kinds) as Kind[];
  const whereKeyIs = new Map<string, string>();
  return list(MAX_RESOURCES_PER_REPORT)(value, field).map((item, i) => {
    const at = `${field}[${i}]`;
    const fields = Fields.of(item, at, ['name', 'key', ...names]);
    const name = fields.required('name', nameText);
    const ownKey = fields.optional('key', nameText);
    const key = ownKey ?? name;
    const kind = fields.oneOf(names);
    const check = fields.required(kind, kinds[kind]);
    const first = whereKeyIs.get(key);
    if (first !== undefined)
      throw new FieldProblem(
        fields.field(ownKey === undefined ? 'name' : 'key'),
        `the key "${key}" is already ${first}'s: keys must differ within ${field} (set a distinct key)`,
      );
    whereKeyIs.set(key, at);
    return { name, key, ...check };
  });
}

export const readExternalIp: Parse<ExternalIpConfig> = (value, field) => {
  if (typeof value === 'string' && isIP(value) !== 0) return { address: value };
  if (isMapping(value)) return { url: Fields.of(value, field, ['url']).required('url', httpUrl).href };
  throw new FieldProblem(
    field,
    'must be an IP address, or { url: ... }: a URL that answers with the address',
  );
};
