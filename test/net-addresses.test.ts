import { describe, expect, it } from 'vitest';
import { addressClass, hostLiteral, isAllowedAddress, parseNetworks } from '../src/net/addresses.js';

// host as written in an https URL → literal after the WHATWG parser, its class, allowed with no exemptions
const literals: [host: string, literal: string, klass: string, allowed: boolean][] = [
  ['2130706433', '127.0.0.1', 'loopback', false],
  ['0x7f.1', '127.0.0.1', 'loopback', false],
  ['127.1', '127.0.0.1', 'loopback', false],
  ['0177.0.0.1', '127.0.0.1', 'loopback', false],
  ['127.255.255.254', '127.255.255.254', 'loopback', false],
  ['[::ffff:127.0.0.1]', '::ffff:7f00:1', 'loopback', false],
  ['[::ffff:7f00:1]', '::ffff:7f00:1', 'loopback', false],
  ['[::1]', '::1', 'loopback', false],
  ['0.0.0.0', '0.0.0.0', 'unspecified', false],
  ['0.1.2.3', '0.1.2.3', 'unspecified', false],
  ['[::]', '::', 'unspecified', false],
  ['10.0.0.5', '10.0.0.5', 'private', false],
  ['172.16.0.1', '172.16.0.1', 'private', false],
  ['172.31.255.255', '172.31.255.255', 'private', false],
  ['192.168.1.1', '192.168.1.1', 'private', false],
  ['[64:ff9b::a00:1]', '64:ff9b::a00:1', 'private', false],
  ['[2002:c0a8:101::]', '2002:c0a8:101::', 'private', false],
  ['[::ffff:0:a00:1]', '::ffff:0:a00:1', 'private', false],
  ['169.254.169.254', '169.254.169.254', 'linkLocal', false],
  ['[fe80::1]', 'fe80::1', 'linkLocal', false],
  ['100.64.0.1', '100.64.0.1', 'carrierGradeNat', false],
  ['100.127.255.255', '100.127.255.255', 'carrierGradeNat', false],
  ['[fc00::1]', 'fc00::1', 'uniqueLocal', false],
  ['[fd12:3456::1]', 'fd12:3456::1', 'uniqueLocal', false],
  ['224.0.0.1', '224.0.0.1', 'multicast', false],
  ['[ff02::1]', 'ff02::1', 'multicast', false],
  ['255.255.255.255', '255.255.255.255', 'broadcast', false],
  ['192.0.2.10', '192.0.2.10', 'documentation', false],
  ['198.51.100.7', '198.51.100.7', 'documentation', false],
  ['203.0.113.9', '203.0.113.9', 'documentation', false],
  ['[2001:db8::1]', '2001:db8::1', 'documentation', false],
  ['198.18.0.1', '198.18.0.1', 'benchmarking', false],
  ['240.0.0.1', '240.0.0.1', 'reserved', false],
  ['192.88.99.1', '192.88.99.1', 'reserved', false],
  ['[::a00:1]', '::a00:1', 'reserved', false],
  ['[2001::1]', '2001::1', 'teredo', false],
  ['[64:ff9b:1::a00:1]', '64:ff9b:1::a00:1', 'rfc6052', false],
  ['[fec0::1]', 'fec0::1', 'deprecatedSiteLocal', false],
  ['8.8.8.8', '8.8.8.8', 'unicast', true],
  ['0x08080808', '8.8.8.8', 'unicast', true],
  ['1.1.1.1', '1.1.1.1', 'unicast', true],
  ['172.32.0.1', '172.32.0.1', 'unicast', true],
  ['100.63.255.255', '100.63.255.255', 'unicast', true],
  ['169.253.255.255', '169.253.255.255', 'unicast', true],
  ['[2606:4700:4700::1111]', '2606:4700:4700::1111', 'unicast', true],
  ['[2001:4860:4860::8888]', '2001:4860:4860::8888', 'unicast', true],
  ['[::ffff:8.8.8.8]', '::ffff:808:808', 'unicast', true],
  ['[64:ff9b::808:808]', '64:ff9b::808:808', 'unicast', true],
  ['[2002:808:808::1]', '2002:808:808::1', 'unicast', true],
];

describe('literal hosts, as the URL parser leaves them', () => {
  it.each(literals)('https://%s/ is %s, %s, allowed=%s', (host, literal, klass, allowed) => {
    const hostname = new URL(`https://${host}/`).hostname;
    const found = hostLiteral(hostname);
    expect(found).toBe(literal);
    expect(addressClass(literal)).toBe(klass);
    expect(isAllowedAddress(literal, [])).toBe(allowed);
  });

  it.each(['example.com', 'localhost', 'webhooks.example.org', '1.2.3.4.example', 'xn--bcher-kva.example'])(
    'https://%s/ is a name, not a literal',
    (host) => {
      expect(hostLiteral(new URL(`https://${host}/`).hostname)).toBeUndefined();
    },
  );
});

describe('allowed networks', () => {
  const exemptions: [networks: string[], ip: string, allowed: boolean][] = [
    [['127.0.0.0/8'], '127.0.0.1', true],
    [['127.0.0.0/8'], '::ffff:7f00:1', true],
    [['127.0.0.0/8'], '::1', false],
    [['127.0.0.0/8'], '10.0.0.1', false],
    [['::1/128'], '::1', true],
    [['::1/128'], '127.0.0.1', false],
    [['10.0.0.0/8', 'fd00::/8'], '10.1.2.3', true],
    [['10.0.0.0/8', 'fd00::/8'], 'fd00::5', true],
    [['10.0.0.0/8', 'fd00::/8'], 'fc00::5', false],
    [['10.0.0.0/8', 'fd00::/8'], '64:ff9b::a00:1', true],
    [['10.0.0.0/24'], '10.0.1.1', false],
    [['192.168.1.0/24'], '192.168.1.200', true],
    [['100.64.0.0/10'], '100.100.0.1', true],
    [['10.0.0.0/8'], '8.8.8.8', true],
  ];

  it.each(exemptions)('%j lets %s through: %s', (networks, ip, allowed) => {
    expect(isAllowedAddress(ip, parseNetworks(networks))).toBe(allowed);
  });

  it('trims entries and keeps the text', () => {
    const [network] = parseNetworks([' 10.0.0.0/8 ']);
    expect(network?.text).toBe('10.0.0.0/8');
  });

  it.each(['nonsense', '10.0.0.0', '10.0.0.0/33', '10/8', '0x0a.0.0.0/8', 'fd00::/129', ''])(
    'refuses %j as a network',
    (cidr) => {
      expect(() => parseNetworks([cidr])).toThrow(/not a network in CIDR notation/);
    },
  );
});

describe('addressClass', () => {
  it('refuses what is not an IP address', () => {
    expect(() => addressClass('example.com')).toThrow(/not an IP address/);
    expect(() => addressClass('127.1')).toThrow(/not an IP address/);
  });
});
