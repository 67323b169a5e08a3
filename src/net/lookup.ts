import { lookup as systemLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isAllowedAddress, type Network } from './addresses.js';
import { blockedAddress, classify, OutboundError } from './errors.js';

function dnsFailure(error: NodeJS.ErrnoException | null): OutboundError {
  if (error === null) return new OutboundError('dns', 'the name did not resolve');
  const known = classify(error, 0);
  if (known?.kind === 'dns') return known;
  const code = error.code === undefined ? '' : ` (${error.code})`;
  return new OutboundError('dns', `the name could not be resolved${code}`, { cause: error });
}

/**
 * A `lookup` for `net.connect` that resolves every address of the name and refuses the name unless every one
 * is allowed (docs/rules/webhooks.md#outbound-calls). The socket connects to what this returns, so there is
 * no second resolution a rebinding DNS server could answer differently.
 */
export function vettedLookup(allowed: Network[]): LookupFunction {
  return (hostname, options, callback) => {
    systemLookup(hostname, { all: true, family: 0 }, (error, addresses: LookupAddress[]) => {
      if (error !== null || addresses.length === 0) {
        callback(dnsFailure(error), []);
        return;
      }
      const refused = addresses.find((entry) => !isAllowedAddress(entry.address, allowed));
      if (refused !== undefined) {
        callback(blockedAddress(refused.address), []);
        return;
      }
      const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
      const wanted =
        family === 4 || family === 6 ? addresses.filter((entry) => entry.family === family) : addresses;
      const first = wanted[0];
      if (first === undefined) {
        callback(new OutboundError('dns', `the name has no IPv${family} address`), []);
      } else if (options.all === true) {
        callback(null, wanted);
      } else {
        callback(null, first.address, first.family);
      }
    });
  };
}
