import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A device for the agent on a machine without systemd or WireGuard: `systemctl`, `wg` and `swanctl` are
 * scripts first on PATH that print what the test wrote in their files (`systemctl.<unit>`, `wg.<interface>`,
 * `swanctl`), and an os-release the test can break.
 */
export class FakeDevice {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgewatch-agent-'));
  readonly bin = path.join(this.dir, 'bin');
  readonly stateDir = path.join(this.dir, 'state');
  readonly osRelease = path.join(this.dir, 'os-release');
  readonly tokenFile = path.join(this.dir, 'token');

  constructor() {
    fs.mkdirSync(this.bin);
    fs.mkdirSync(this.stateDir);
    const tool = (name: string, file: string) =>
      fs.writeFileSync(path.join(this.bin, name), `#!/bin/sh\nexec cat "${this.dir}/${file}"\n`, {
        mode: 0o755,
      });
    // systemctl show -p LoadState,ActiveState,SubState UNIT; wg show IF latest-handshakes; swanctl --list-sas --raw
    tool('systemctl', 'systemctl.$4');
    tool('wg', 'wg.$2');
    tool('swanctl', 'swanctl');
    fs.writeFileSync(this.osRelease, 'PRETTY_NAME="Edge OS 4.2"\nNAME="Edge OS"\n');
  }

  write(file: string, text: string): void {
    fs.writeFileSync(path.join(this.dir, file), text);
  }

  unit(unit: string, activeState: string, subState = activeState === 'active' ? 'running' : 'dead'): void {
    this.write(`systemctl.${unit}`, `LoadState=loaded\nActiveState=${activeState}\nSubState=${subState}\n`);
  }

  /** The peer's latest handshake, `ageSeconds` ago. */
  handshake(iface: string, peer: string, ageSeconds: number): void {
    this.write(`wg.${iface}`, `${peer}\t${Math.floor(Date.now() / 1000) - ageSeconds}\n`);
  }

  config(yaml: string): string {
    const file = path.join(this.dir, 'agent.yaml');
    fs.writeFileSync(file, `token_file: ${this.tokenFile}\nstate_dir: ${this.stateDir}\n${yaml}`);
    return file;
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `edgewatch agent` in its own process, on the fake device. */
export class AgentProcess {
  readonly stderr: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  constructor(device: FakeDevice, args: string[], env: Record<string, string> = {}) {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'src/agent/main.ts', ...args], {
      cwd: PROJECT_ROOT,
      env: {
        PATH: `${device.bin}:${process.env.PATH ?? ''}`,
        HOME: device.dir,
        EDGEWATCH_OS_RELEASE: device.osRelease,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => this.stderr.push(chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.stderr.push(chunk));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  get log(): string {
    return this.stderr.join('');
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  async stop(): Promise<void> {
    this.kill('SIGKILL');
    await this.exited;
  }
}

/** Polls `check` until it holds; its last failure otherwise. */
export async function eventually(check: () => Promise<void> | void, timeoutMs: number, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }
}
