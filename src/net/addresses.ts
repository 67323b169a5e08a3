import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A parsed CIDR block, e.g. from `WEBHOOK_ALLOWED_NETWORKS`. */
export interface Network {
  readonly text: string;
  readonly address: Address;
  readonly prefix: number;
}

const v4 = (text: string) => ipaddr.IPv4.parse(text);
const v6 = (text: string) => ipaddr.IPv6.parse(text);

// ipaddr.js files these under 'reserved'; a precise name makes refusal messages say what the address is.
const IPV4_NAMED: Record<string, [ipaddr.IPv4, number][]> = {
  documentation: [
    [v4('192.0.2.0'), 24],
    [v4('198.51.100.0'), 24],
    [v4('203.0.113.0'), 24],
  ],
  benchmarking: [[v4('198.18.0.0'), 15]],
};
const IPV6_NAMED: Record<string, [ipaddr.IPv6, number][]> = {
  documentation: [
    [v6('2001:db8::'), 32],
    [v6('3fff::'), 20],
  ],
};
const NAT64_WELL_KNOWN: [ipaddr.IPv6, number] = [v6('64:ff9b::'), 96];
// Only 2000::/3 is allocated as global unicast; ipaddr.js calls everything it has no name for 'unicast'.
const GLOBAL_UNICAST: [ipaddr.IPv6, number] = [v6('2000::'), 3];

/** Parses CIDR blocks; IPv4 must be written as four decimal parts. Throws on the first bad entry. */
export function parseNetworks(cidrs: string[]): Network[] {
  return cidrs.map((raw) => {
    const text = raw.trim();
    const valid = text.includes(':')
      ? ipaddr.IPv6.isValidCIDR(text)
      : ipaddr.IPv4.isValidCIDRFourPartDecimal(text);
    if (!valid)
      throw new Error(`"${text}" is not a network in CIDR notation (for example 10.0.0.0/8 or fd00::/8)`);
    const [address, prefix] = ipaddr.parseCIDR(text);
    return { text, address, prefix };
  });
}

/**
 * The IP address in a `URL.hostname` (which the WHATWG parser has already normalized, e.g.
 * `https://2130706433/` → `127.0.0.1`), without the brackets of IPv6; undefined for a host name.
 */
export function hostLiteral(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}

/** The IPv4 address an IPv6 form carries to (mapped, translated, NAT64 well-known prefix, 6to4). */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = address.range();
  const p = address.parts;
  const fromWords = (high: number, low: number) =>
    new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  if (range === 'ipv4Mapped' || range === 'rfc6145' || address.match(NAT64_WELL_KNOWN)) {
    return fromWords(p[6] ?? 0, p[7] ?? 0);
  }
  if (range === '6to4') return fromWords(p[1] ?? 0, p[2] ?? 0);
  return undefined;
}

function parse(ip: string): Address {
  if (isIP(ip) === 0) throw new Error(`"${ip}" is not an IP address`);
  return ipaddr.parse(ip);
}

function unwrap(address: Address): Address {
  return address.kind() === 'ipv6' ? (embeddedIPv4(address as ipaddr.IPv6) ?? address) : address;
}

// The global subnetMatch: the instance method in the type declarations does not exist in ipaddr.js 2.5.
function classOf(address: Address): string {
  if (address.kind() === 'ipv4') {
    const ipv4 = address as ipaddr.IPv4;
    return ipaddr.subnetMatch(ipv4, IPV4_NAMED, ipv4.range());
  }
  const ipv6 = address as ipaddr.IPv6;
  const name = ipaddr.subnetMatch(ipv6, IPV6_NAMED, ipv6.range());
  return name === 'unicast' && !ipv6.match(GLOBAL_UNICAST) ? 'reserved' : name;
}

/**
 * The range an address belongs to, after unwrapping IPv6 forms that carry an IPv4 address:
 * 'unicast' (public), 'loopback', 'private', 'linkLocal', 'carrierGradeNat', 'uniqueLocal', 'multicast',
 * 'unspecified', 'broadcast', 'documentation', 'benchmarking', 'reserved', 'teredo', 'rfc6052', … .
 * Throws when `ip` is not an IP address.
 */
export function addressClass(ip: string): string {
  return classOf(unwrap(parse(ip)));
}

/** Public unicast, or inside one of the exempted networks (checked in the written and the unwrapped form). */
export function isAllowedAddress(ip: string, allowed: Network[]): boolean {
  const written = parse(ip);
  const effective = unwrap(written);
  if (classOf(effective) === 'unicast') return true;
  return allowed.some((network) =>
    [written, effective].some(
      (form) => form.kind() === network.address.kind() && form.match(network.address, network.prefix),
    ),
  );
}
