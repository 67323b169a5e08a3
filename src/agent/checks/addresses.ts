import type { NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import { excerpt, outputLines, parsed, unreadable, type Parsed } from './result.js';

const RTF_UP = 0x0001;
const RTF_REJECT = 0x0200;
const HEADER = [
  'Iface',
  'Destination',
  'Gateway',
  'Flags',
  'RefCnt',
  'Use',
  'Metric',
  'Mask',
  'MTU',
  'Window',
  'IRTT',
];

/**
 * Reads /proc/net/route (IPv4, main table; hex fields, Metric in decimal): the interface of the default
 * route (Destination and Mask 00000000) with the lowest Metric, the first listed on a tie; undefined when
 * there is none. Unreachable and prohibit routes (flag REJECT, interface `*`) carry no traffic and are
 * passed over.
 */
export function parseDefaultRouteInterface(procNetRoute: string): Parsed<string | undefined> {
  const [header, ...rows] = outputLines(procNetRoute).map((line) => line.trim().split(/\s+/));
  if (header?.join(' ') !== HEADER.join(' ')) {
    return unreadable(`not /proc/net/route: ${excerpt(header?.join(' ') ?? '')}`);
  }
  let best: { iface: string; metric: number } | undefined;
  for (const row of rows) {
    if (row.length < HEADER.length) return unreadable(`route cut short: ${excerpt(row.join(' '))}`);
    const [iface = '', destination, , flagsHex = '', , , metricText, mask] = row;
    const flags = Number.parseInt(flagsHex, 16);
    const metric = Number(metricText);
    const usable = (flags & RTF_UP) !== 0 && (flags & RTF_REJECT) === 0 && iface !== '*';
    const isDefault = destination === '00000000' && mask === '00000000';
    if (usable && isDefault && (best === undefined || metric < best.metric)) best = { iface, metric };
  }
  return parsed(best?.iface);
}

// Interfaces of containers, bridges for them, VPNs and overlays: their addresses are not where the device
// is reached on its network. Docker names its bridges br- and 12 hex digits; other br- names (OpenWrt's
// br-lan) are the device's own LAN.
const VIRTUAL_INTERFACE = /^(?:lo$|br-[0-9a-f]{12}$|docker|veth|tun|tap|virbr|cni|flannel|cilium|lxc|podman)/;

/**
 * The device's InternalIP: an address of the default route's interface, else of the first interface that is
 * not virtual; IPv4 before IPv6 either way, never a loopback or link-local one (169.254/16, fe80::/10).
 */
export function pickAddresses(
  interfaces: ReturnType<typeof networkInterfaces>,
  defaultInterface?: string,
): string | undefined {
  const onDefault = defaultInterface === undefined ? undefined : interfaces[defaultInterface];
  const fromDefault = preferIPv4(onDefault ?? []);
  if (fromDefault !== undefined) return fromDefault;
  const physical = Object.entries(interfaces).filter(([name]) => !VIRTUAL_INTERFACE.test(name));
  return preferIPv4(physical.flatMap(([, addresses]) => addresses ?? []));
}

function preferIPv4(addresses: NetworkInterfaceInfo[]): string | undefined {
  const usable = addresses.filter((info) => !info.internal && !isLinkLocal(info.address));
  return (usable.find((info) => info.family === 'IPv4') ?? usable.find((info) => info.family === 'IPv6'))
    ?.address;
}

function isLinkLocal(address: string): boolean {
  return address.startsWith('169.254.') || /^fe[89ab][0-9a-f]:/i.test(address);
}
