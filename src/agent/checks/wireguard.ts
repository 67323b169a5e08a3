import { excerpt, outputLines, parsed, unreadable, type Parsed } from './result.js';
import { connected, terminated, type TunnelCheck } from './tunnel.js';

// A Curve25519 key in base64: 32 bytes, so 43 characters and one '=' of padding.
const PUBLIC_KEY = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
const UNIX_SECONDS = /^\d{1,12}$/;

/**
 * Reads `wg show <interface> latest-handshakes`: each peer's public key → the Unix time of its latest
 * handshake, 0 when there has been none. An interface without peers prints nothing.
 */
export function parseLatestHandshakes(output: string): Parsed<Map<string, number>> {
  const handshakes = new Map<string, number>();
  for (const line of outputLines(output)) {
    const [key = '', seconds = '', ...rest] = line.split('\t');
    if (rest.length > 0 || !PUBLIC_KEY.test(key) || !UNIX_SECONDS.test(seconds)) {
      return unreadable(`not a "<public key><TAB><seconds>" line: ${excerpt(line)}`);
    }
    handshakes.set(key, Number(seconds));
  }
  return parsed(handshakes);
}

/**
 * CONNECTED while `peer`'s latest handshake is younger than `maxHandshakeAgeSeconds`. WireGuard renews the
 * session every 2 minutes while packets flow and drops a session older than 3 minutes, so an idle peer
 * without persistent-keepalive stops handshaking and reads as TERMINATED.
 */
export function wireguardState(
  output: string,
  peer: string,
  maxHandshakeAgeSeconds: number,
  nowSeconds: number,
): TunnelCheck {
  const handshakes = parseLatestHandshakes(output);
  if ('error' in handshakes) return terminated(`wg output unreadable: ${handshakes.error}`);
  const latest = handshakes.value.get(peer);
  if (latest === undefined) return terminated(`peer ${peer} is not configured on the interface`);
  if (latest === 0) return terminated(`no handshake with peer ${peer} yet`);
  // A handshake stamped after now (the clock was set back) counts as fresh.
  const age = nowSeconds - latest;
  if (age >= maxHandshakeAgeSeconds) {
    return terminated(
      `latest handshake with peer ${peer} was ${age} s ago (limit ${maxHandshakeAgeSeconds} s)`,
    );
  }
  return connected();
}
