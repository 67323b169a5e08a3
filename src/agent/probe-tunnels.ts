import fs from 'node:fs/promises';
import net from 'node:net';
import { ipsecState } from './checks/ipsec.js';
import { openvpnManagementState, openvpnStatusState } from './checks/openvpn.js';
import { terminated, type TunnelCheck } from './checks/tunnel.js';
import { wireguardState } from './checks/wireguard.js';
import type { OpenVpnTunnel, TunnelConfig } from './config.js';
import { runTool, type ToolOutput } from './exec.js';

/** OpenVPN rewrites its status file every 60 s unless told otherwise: three missed writes mean it is gone. */
const OPENVPN_STATUS_MAX_AGE_S = 180;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Each tunnel's state now. One `swanctl --list-sas` serves every IPsec tunnel of the check. */
export async function checkTunnels(
  tunnels: readonly TunnelConfig[],
  timeoutMs: number,
): Promise<TunnelCheck[]> {
  let ipsecSas: Promise<ToolOutput> | undefined;
  const listSas = () => (ipsecSas ??= runTool('swanctl', ['--list-sas', '--raw'], timeoutMs));
  return Promise.all(
    tunnels.map(async (tunnel): Promise<TunnelCheck> => {
      switch (tunnel.type) {
        case 'wireguard': {
          // `latest-handshakes`, never `dump`: dump prints the interface's private key.
          const output = await runTool('wg', ['show', tunnel.interface, 'latest-handshakes'], timeoutMs);
          if ('error' in output) return terminated(output.error);
          return wireguardState(output.stdout, tunnel.peer, tunnel.maxHandshakeAgeSeconds, nowSeconds());
        }
        case 'ipsec': {
          const output = await listSas();
          return 'error' in output ? terminated(output.error) : ipsecState(output.stdout, tunnel.connection);
        }
        case 'openvpn':
          return checkOpenvpn(tunnel, timeoutMs);
      }
    }),
  );
}

async function checkOpenvpn(tunnel: OpenVpnTunnel, timeoutMs: number): Promise<TunnelCheck> {
  if ('statusFile' in tunnel) {
    const text = await fs.readFile(tunnel.statusFile, 'utf8').catch((error: NodeJS.ErrnoException) => error);
    if (typeof text !== 'string')
      return terminated(`cannot read ${tunnel.statusFile}: ${text.code ?? text.message}`);
    return openvpnStatusState(text, { maxAgeSeconds: OPENVPN_STATUS_MAX_AGE_S, nowSeconds: nowSeconds() });
  }
  const reply = await askManagement(tunnel.management, timeoutMs);
  return 'error' in reply ? terminated(reply.error) : openvpnManagementState(reply.stdout);
}

/** `state` on OpenVPN's management socket: its reply, up to the END line. */
function askManagement(socketPath: string, timeoutMs: number): Promise<ToolOutput> {
  return new Promise((resolve) => {
    let reply = '';
    const socket = net.connect(socketPath);
    const finish = (result: ToolOutput) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => finish({ error: `${socketPath} did not answer in time` }));
    socket.on('connect', () => socket.write('state\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (/^END\r?$/m.test(reply)) {
        socket.end('quit\n');
        finish({ stdout: reply });
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) =>
      finish({ error: `${socketPath}: ${error.code ?? error.message}` }),
    );
    socket.on('close', () => finish({ error: `${socketPath} closed before the END of its reply` }));
  });
}
