import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

const unit = fs.readFileSync('deploy/edgewatch-agent.service', 'utf8');
const dropIn = fs.readFileSync('deploy/edgewatch-agent-wireguard.conf', 'utf8');
/** The unit's settings, comments left out. */
const settings = (text: string) =>
  text
    .split('\n')
    .filter((line) => /^[A-Za-z]+=/.test(line))
    .map((line) => line.trim());

describe('deploy/edgewatch-agent.service', () => {
  it('runs the agent as a dynamic user, with its token as a credential, hardened and not restarted on 78', () => {
    for (const line of [
      'DynamicUser=yes',
      'StateDirectory=edgewatch-agent',
      'LoadCredential=token:/etc/edgewatch/token',
      'ProtectSystem=strict',
      'ProtectHome=yes',
      'PrivateTmp=yes',
      'NoNewPrivileges=yes',
      'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK',
      'Restart=on-failure',
      'RestartPreventExitStatus=78',
      'CapabilityBoundingSet=',
    ])
      expect(settings(unit)).toContain(line);
    // V8 writes the code it then runs: this setting would kill the agent at start.
    expect(settings(unit).some((line) => line.startsWith('MemoryDenyWriteExecute'))).toBe(false);
    expect(settings(unit).some((line) => line.includes('CAP_NET_ADMIN'))).toBe(false);
    expect(settings(dropIn)).toEqual([
      'AmbientCapabilities=CAP_NET_ADMIN',
      'CapabilityBoundingSet=CAP_NET_ADMIN',
    ]);
  });

  it('passes systemd-analyze verify', () => {
    const verify = spawnSync('systemd-analyze', ['verify', 'deploy/edgewatch-agent.service'], {
      encoding: 'utf8',
    });
    expect(verify.error).toBeUndefined();
    expect({ status: verify.status, said: `${verify.stdout}${verify.stderr}` }).toEqual({
      status: 0,
      said: '',
    });
  });
});
