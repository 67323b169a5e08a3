import fs from 'node:fs';
import path from 'node:path';
import type { AgentReport } from '../features/fleet/reports/schemas.js';

/**
 * The report the server has not taken yet, kept in the state directory so that a restart sends it first: a
 * change seen while the server was out of reach is not lost with the process. Written atomically (a new
 * file, flushed, then renamed over the old one), so a crash leaves the old report or the new, never half.
 */
export class PendingReport {
  private readonly file: string;

  constructor(stateDir: string) {
    this.file = path.join(stateDir, 'pending-report.json');
  }

  read(): AgentReport | undefined {
    try {
      return JSON.parse(fs.readFileSync(this.file, 'utf8')) as AgentReport;
    } catch {
      // None, or unreadable: the next check makes a fresh one.
      return undefined;
    }
  }

  write(report: AgentReport): void {
    const temporary = `${this.file}.${process.pid}.tmp`;
    const descriptor = fs.openSync(temporary, 'w', 0o600);
    try {
      fs.writeSync(descriptor, JSON.stringify(report));
      fs.fsyncSync(descriptor);
    } finally {
      fs.closeSync(descriptor);
    }
    fs.renameSync(temporary, this.file);
  }

  clear(): void {
    fs.rmSync(this.file, { force: true });
  }
}
