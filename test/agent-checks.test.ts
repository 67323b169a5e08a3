import { readFileSync } from 'node:fs';
import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseDefaultRouteInterface, pickAddresses } from '../src/agent/checks/addresses.js';
import { certificateValidity } from '../src/agent/checks/certificate.js';
import { ipsecState, parseListSas } from '../src/agent/checks/ipsec.js';
import {
  openvpnManagementState,
  openvpnStatusState,
  parseManagementState,
  parseOpenvpnStatus,
} from '../src/agent/checks/openvpn.js';
import { osPrettyName, parseOsRelease } from '../src/agent/checks/os-release.js';
import type { TunnelCheck } from '../src/agent/checks/tunnel.js';
import {
  nextServiceStatus,
  parseUnitState,
  TRANSITION_GRACE_MS,
  type ServiceCheck,
  type ServiceStatus,
} from '../src/agent/checks/systemd.js';
import { parseLatestHandshakes, wireguardState } from '../src/agent/checks/wireguard.js';

const fixture = (path: string) => readFileSync(new URL(`fixtures/agent/${path}`, import.meta.url), 'utf8');

/** CONNECTED, or TERMINATED with a reason that matches. */
function expectTunnel(check: TunnelCheck, expected: 'CONNECTED' | RegExp) {
  if (expected === 'CONNECTED') expect(check).toEqual({ state: 'CONNECTED' });
  else expect(check).toEqual({ state: 'TERMINATED', reason: expect.stringMatching(expected) });
}

describe('WireGuard latest handshakes', () => {
  const peer = 'i7GtMFVaf6WsJ7wHRGW1huiAI3aXnC8kjEI1Jkz/LvI=';
  const neverHandshook = 'Oxy4mef7DxPFI5HA4CHQO3OwcQQF1nwbymFEvduBc04=';
  const handshakeAt = 1_767_225_540;

  it('maps each peer to its latest handshake, 0 for none, and reads no peers from no output', () => {
    expect(parseLatestHandshakes(fixture('wireguard/several-peers.txt'))).toEqual({
      value: new Map([
        [peer, handshakeAt],
        [neverHandshook, 0],
        ['LPybpMOf4exdD3clE6c70c0rPX5dFa1FepjIEIo7pi4=', 1_767_221_000],
      ]),
    });
    expect(parseLatestHandshakes(fixture('wireguard/empty.txt'))).toEqual({ value: new Map() });
  });

  it.each([
    ['truncated.txt', /not a "<public key><TAB><seconds>" line: "Oxy4mef7DxPFI5HA4"/],
    ['garbage.txt', /not a "<public key><TAB><seconds>" line: "interface: wg0"/],
  ])('refuses %s', (file, reason) => {
    expect(parseLatestHandshakes(fixture(`wireguard/${file}`))).toEqual({
      error: expect.stringMatching(reason),
    });
  });

  it.each([
    ['one-peer.txt', peer, handshakeAt + 179, 'CONNECTED'],
    ['several-peers.txt', peer, handshakeAt + 1, 'CONNECTED'],
    ['one-peer.txt', peer, handshakeAt - 3_600, 'CONNECTED'],
    ['one-peer.txt', peer, handshakeAt + 180, /was 180 s ago \(limit 180 s\)/],
    ['several-peers.txt', neverHandshook, handshakeAt, /no handshake with peer Oxy4.* yet/],
    ['several-peers.txt', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', handshakeAt, /not configured/],
    ['empty.txt', peer, handshakeAt, /is not configured on the interface/],
    ['truncated.txt', peer, handshakeAt, /^wg output unreadable: /],
  ] as const)('%s, peer %s at %i: %s', (file, key, now, expected) => {
    expectTunnel(wireguardState(fixture(`wireguard/${file}`), key, 180, now), expected);
  });
});

describe('strongSwan swanctl --list-sas --raw', () => {
  it('lists every IKE SA with its child SAs, identities with spaces and lists included', () => {
    const sas = parseListSas(fixture('swanctl/several.txt'));
    expect(sas).toEqual({
      value: [
        {
          name: 'hq',
          state: 'ESTABLISHED',
          children: [
            { name: 'net-12', state: 'INSTALLED' },
            { name: 'mgmt-13', state: 'INSTALLED' },
          ],
        },
        { name: 'dc2', state: 'CONNECTING', children: [] },
        { name: 'dc2', state: 'ESTABLISHED', children: [{ name: 'dc2-7', state: 'INSTALLED' }] },
        { name: 'backup', state: 'ESTABLISHED', children: [] },
        { name: 'lab', state: 'ESTABLISHED', children: [{ name: 'lab-21', state: 'DELETING' }] },
      ],
    });
    expect(parseListSas(fixture('swanctl/empty.txt'))).toEqual({ value: [] });
  });

  it('keeps a value whole when it holds a brace or what looks like a section', () => {
    const line = 'list-sa event {gw {uniqueid=1 state=ESTABLISHED remote-id=CN=a}b {c child-sas {}}}';
    expect(parseListSas(`${line}\nlist-sas reply {}\n`)).toEqual({
      value: [{ name: 'gw', state: 'ESTABLISHED', children: [] }],
    });
  });

  it.each([
    ['established.txt', 'dc2', 'CONNECTED'],
    ['rekeying.txt', 'dc2', 'CONNECTED'],
    ['several.txt', 'hq', 'CONNECTED'],
    ['several.txt', 'dc2', 'CONNECTED'],
    ['several.txt', 'backup', /^IKE SA "backup" is ESTABLISHED without child SAs$/],
    ['several.txt', 'lab', /^IKE SA "lab" is ESTABLISHED but no child SA is installed \(lab-21 DELETING\)$/],
    ['several.txt', 'dc1', /^no IKE SA named "dc1"$/],
    ['connecting.txt', 'dc2', /^IKE SA "dc2" is CONNECTING$/],
    ['empty.txt', 'dc2', /^no IKE SA named "dc2"$/],
    ['no-output.txt', 'dc2', /^swanctl output unreadable: no output$/],
    ['truncated.txt', 'dc2', /^swanctl output unreadable: malformed: "list-sa event/],
    ['garbage.txt', 'dc2', /^swanctl output unreadable: not a raw vici message: "dc2: #3, ESTABLISHED/],
  ] as const)('%s, IKE SA %s: %s', (file, name, expected) => {
    expectTunnel(ipsecState(fixture(`swanctl/${file}`), name), expected);
  });

  it('needs the final reply: events alone were cut short', () => {
    const events = fixture('swanctl/established.txt').replace('list-sas reply {}\n', '');
    expectTunnel(ipsecState(events, 'dc2'), /output cut short: no "list-sas reply"/);
  });
});

describe('OpenVPN status file', () => {
  const writtenAt = 1_767_225_510;

  it('reads the time written and the clients, version 2 by commas and version 3 by tabs', () => {
    expect(parseOpenvpnStatus(fixture('openvpn/status-v2.txt'))).toEqual({
      value: { writtenAt, clients: ['hq-gw', 'dc2-gw'] },
    });
    expect(parseOpenvpnStatus(fixture('openvpn/status-v3.txt'))).toEqual({
      value: { writtenAt, clients: ['Example, Inc. hq-gw'] },
    });
  });

  it.each([
    ['status-v2.txt', writtenAt + 119, undefined, 'CONNECTED'],
    ['status-v2.txt', writtenAt, 'dc2-gw', 'CONNECTED'],
    ['status-v3.txt', writtenAt, 'Example, Inc. hq-gw', 'CONNECTED'],
    ['status-v2.txt', writtenAt, 'lab-gw', /^client "lab-gw" is not connected$/],
    ['status-v2.txt', writtenAt + 120, undefined, /^status file stale: written 120 s ago \(limit 120 s\)$/],
    ['status-v2-no-clients.txt', writtenAt, undefined, /^no client connected$/],
    ['status-v2-truncated.txt', writtenAt, undefined, /cut short: no END line$/],
    ['status-v1.txt', writtenAt, undefined, /version 1 has no Unix time/],
    ['status-client.txt', writtenAt, undefined, /client's status file .* use the management state/],
    ['status-empty.txt', writtenAt, undefined, /^OpenVPN status unreadable: empty status file$/],
  ] as const)('%s at %i, client %s: %s', (file, nowSeconds, commonName, expected) => {
    const limits = { maxAgeSeconds: 120, nowSeconds, ...(commonName && { commonName }) };
    expectTunnel(openvpnStatusState(fixture(`openvpn/${file}`), limits), expected);
  });
});

describe('OpenVPN management state', () => {
  it('takes the latest entry of the history, past notifications', () => {
    expect(parseManagementState(fixture('openvpn/state-reconnecting.txt'))).toEqual({
      value: { at: 1_767_225_505, state: 'AUTH', detail: '' },
    });
    expect(parseManagementState(fixture('openvpn/state-all-connected.txt'))).toEqual({
      value: { at: 1_767_225_394, state: 'CONNECTED', detail: 'SUCCESS' },
    });
  });

  it.each([
    ['1767225400,CONNECTED,SUCCESS,10.8.0.6,203.0.113.5,1194,,\nEND\n', 'CONNECTED'],
    ['1767225499,RECONNECTING,ping-restart,,,,,\nEND\n', /^OpenVPN is RECONNECTING \(ping-restart\)$/],
    ['1767225499,EXITING,SIGTERM,,,,,\r\nEND\r\n', /^OpenVPN is EXITING \(SIGTERM\)$/],
  ] as const)('%j: %s', (reply, expected) => {
    expectTunnel(openvpnManagementState(reply), expected);
  });

  it.each([
    ['state-connected.txt', 'CONNECTED'],
    ['state-all-connected.txt', 'CONNECTED'],
    ['state-reconnecting.txt', /^OpenVPN is AUTH$/],
    ['state-truncated.txt', /unreadable: reply cut short: no END line$/],
    ['state-garbage.txt', /unreadable: not a state line: "ERROR: unknown command/],
    ['state-empty.txt', /unreadable: no reply$/],
  ] as const)('%s: %s', (file, expected) => {
    expectTunnel(openvpnManagementState(fixture(`openvpn/${file}`)), expected);
  });
});

describe('systemd unit state', () => {
  const unit = (file: string) => parseUnitState(fixture(`systemctl/${file}`));

  it('reads the three properties in any order', () => {
    expect(unit('active.txt')).toEqual({
      value: { loadState: 'loaded', activeState: 'active', subState: 'running' },
    });
    expect(unit('other-order.txt')).toEqual({
      value: { loadState: 'loaded', activeState: 'active', subState: 'exited' },
    });
  });

  it.each([
    ['active.txt', { status: 'HEALTHY' }],
    ['reloading.txt', { status: 'HEALTHY' }],
    ['failed.txt', { status: 'UNHEALTHY', reason: 'failed (failed)' }],
    ['inactive.txt', { status: 'UNHEALTHY', reason: 'inactive (dead)' }],
    ['not-found.txt', { status: 'UNHEALTHY', reason: 'unit not found' }],
    ['masked.txt', { status: 'UNHEALTHY', reason: 'inactive (dead), masked' }],
    [
      'no-bus.txt',
      {
        status: 'UNHEALTHY',
        reason: 'systemctl printed "Failed to connect to bus: No such file or directory"',
      },
    ],
    [
      'no-systemd.txt',
      { status: 'UNHEALTHY', reason: expect.stringMatching(/^systemctl printed "System has not/) },
    ],
    ['empty.txt', { status: 'UNHEALTHY', reason: 'systemctl printed nothing' }],
    ['truncated.txt', { status: 'UNHEALTHY', reason: 'systemctl printed "ActiveSta"' }],
    [
      'garbage.txt',
      { status: 'UNHEALTHY', reason: expect.stringMatching(/^systemctl printed "● edgewatch-agent/) },
    ],
  ])('%s → %o', (file, expected) => {
    expect(nextServiceStatus(unit(file), { status: 'HEALTHY', transitionalSince: 5 }, 10)).toEqual(expected);
  });

  it(`keeps the previous status while starting or stopping, for ${TRANSITION_GRACE_MS / 1000} s in all`, () => {
    const starting = 'activating (auto-restart)';
    const kept = (status: ServiceStatus, since: number, state = starting): ServiceCheck => {
      return { status, transitionalSince: since, reason: `${state}: status kept` };
    };
    const late = (since: number, seconds: number): ServiceCheck => {
      return { status: 'UNHEALTHY', transitionalSince: since, reason: `${starting} for ${seconds} s` };
    };
    const steps: [file: string, nowMs: number, expected: ServiceCheck][] = [
      ['active.txt', 0, { status: 'HEALTHY' }],
      ['deactivating.txt', 1_000, kept('HEALTHY', 1_000, 'deactivating (stop-sigterm)')],
      ['activating.txt', 30_999, kept('HEALTHY', 1_000)],
      ['activating.txt', 31_000, late(1_000, 30)],
      ['activating.txt', 90_000, late(1_000, 89)],
      ['active.txt', 91_000, { status: 'HEALTHY' }],
      ['failed.txt', 92_000, { status: 'UNHEALTHY', reason: 'failed (failed)' }],
      ['activating.txt', 93_000, kept('UNHEALTHY', 93_000)],
      ['active.txt', 94_000, { status: 'HEALTHY' }],
    ];
    let previous: ServiceCheck = { status: 'UNHEALTHY' };
    for (const [file, nowMs, expected] of steps) {
      previous = nextServiceStatus(unit(file), previous, nowMs);
      expect([file, nowMs, previous]).toEqual([file, nowMs, expected]);
    }
  });
});

describe('os-release', () => {
  it.each([
    ['debian.txt', 'Debian GNU/Linux 12 (bookworm)'],
    ['openwrt.txt', 'OpenWrt 23.05.5'],
    ['escapes.txt', 'Edge OS 2.1 "Kestrel" $stable `lts` \\ build'],
    ['no-pretty-name.txt', 'Yocto Linux 4.0.18 (kirkstone)'],
    ['name-only.txt', 'Buildroot'],
    ['empty.txt', undefined],
    ['garbage.txt', undefined],
  ])('%s → %s', (file, expected) => {
    expect(osPrettyName(fixture(`os-release/${file}`))).toBe(expected);
  });

  it('undoes shell quoting and skips comments and lines it cannot read', () => {
    const fields = parseOsRelease(fixture('os-release/escapes.txt'));
    expect(Object.fromEntries(fields)).toEqual({
      NAME: 'Edge OS',
      VERSION: '2.1 "Kestrel" $stable `lts` \\ build',
      PRETTY_NAME: 'Edge OS 2.1 "Kestrel" $stable `lts` \\ build',
      ID: 'edge-os',
      VARIANT: "it's quoted twice",
    });
    expect(osPrettyName('PRETTY_NAME="Cut short\nNAME="Edge OS"\nVERSION="3 \\n"')).toBe('Edge OS 3 \\n');
    expect(osPrettyName('PRETTY_NAME=\nNAME="Edge"')).toBe('Edge');
  });
});

describe('default route and InternalIP', () => {
  it.each([
    ['single-default.txt', { value: 'eth0' }],
    ['two-defaults.txt', { value: 'eth0' }],
    ['no-default.txt', { value: undefined }],
    ['truncated.txt', { error: expect.stringMatching(/^route cut short: "eth0 00000000 01000"$/) }],
    ['empty.txt', { error: 'not /proc/net/route: ""' }],
    ['garbage.txt', { error: expect.stringMatching(/^not \/proc\/net\/route: "fd0000/) }],
  ])('%s → %o', (file, expected) => {
    expect(parseDefaultRouteInterface(fixture(`proc-net-route/${file}`))).toEqual(expected);
  });

  const info = (address: string, internal = false): NetworkInterfaceInfo => {
    const common = { address, mac: '02:42:ac:11:00:02', internal };
    return address.includes(':')
      ? { ...common, family: 'IPv6', netmask: 'ffff:ffff:ffff:ffff::', cidr: `${address}/64`, scopeid: 0 }
      : { ...common, family: 'IPv4', netmask: '255.255.255.0', cidr: `${address}/24` };
  };
  const device = {
    lo: [info('127.0.0.1', true), info('::1', true)],
    docker0: [info('172.17.0.1')],
    'br-5f2a9c1d7e3b': [info('172.18.0.1')],
    veth1a2b3c4: [info('fe80::4c1a:2bff:fe3c:4d5e')],
    tun0: [info('10.8.0.6')],
    wwan0: [info('169.254.10.20'), info('fe80::1')],
    wlan0: [info('fe80::2'), info('2001:db8:17::5'), info('192.168.1.17')],
    eth0: [info('2001:db8:1::17')],
  };

  it.each([
    ['eth0', '2001:db8:1::17'],
    ['tun0', '10.8.0.6'],
    ['wwan0', '192.168.1.17'],
    ['gone0', '192.168.1.17'],
    [undefined, '192.168.1.17'],
  ])('default route on %s → %s', (defaultInterface, expected) => {
    expect(pickAddresses(device, defaultInterface)).toBe(expected);
  });

  it('takes IPv6 when no usable IPv4 is left, keeps OpenWrt br-lan, and finds none among virtual ones', () => {
    const { lo, docker0, tun0, wwan0, eth0 } = device;
    expect(pickAddresses({ lo, docker0, wwan0, eth0 })).toBe('2001:db8:1::17');
    expect(pickAddresses({ lo, docker0, 'br-lan': [info('192.168.1.1')] })).toBe('192.168.1.1');
    expect(pickAddresses({ lo, docker0, tun0, wwan0 })).toBeUndefined();
    expect(pickAddresses({})).toBeUndefined();
  });
});

describe('certificate validity', () => {
  const leaf = { not_before: '2026-03-01T09:30:15.000Z', not_after: '2027-03-01T09:30:15.000Z' };

  it.each([
    ['leaf.pem', { value: leaf }],
    ['chain.pem', { value: leaf }],
    ['leaf-with-text.pem', { value: leaf }],
    ['empty.pem', { error: 'no PEM certificate (no BEGIN/END CERTIFICATE block)' }],
    ['truncated.pem', { error: 'no PEM certificate (no BEGIN/END CERTIFICATE block)' }],
    ['garbage.pem', { error: expect.stringMatching(/^not a readable certificate: /) }],
  ])('%s → %o', (file, expected) => {
    expect(certificateValidity(fixture(`certificate/${file}`))).toEqual(expected);
  });

  it('reads dates past 2049, which certificates encode as GeneralizedTime', () => {
    const chain = fixture('certificate/chain.pem');
    const root = chain.slice(chain.indexOf('-----BEGIN CERTIFICATE-----', 1));
    expect(certificateValidity(root)).toEqual({
      value: { not_before: '2025-01-01T00:00:00.000Z', not_after: '2050-01-01T00:00:00.000Z' },
    });
  });
});
