import fs from 'node:fs';
import path from 'node:path';
import type { AgentReport } from '../features/fleet/reports/schemas.js';
import type { AgentLog } from './log.js';

/**
 * The report the server has not taken yet, kept in the state directory so that a restart sends it first: a
 * change seen while the server was out of reach is not lost with the process. Written atomically (a new
 * file, flushed, then renamed over the old one), so a crash leaves the old report or the new, never half.
 */
export class PendingReport {
  private readonly file: string;
  private failing = false;

  constructor(
    stateDir: string,
    private readonly log: AgentLog,
  ) {
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

  /** Keeps the report; when the state directory cannot take it, says so once and goes on without. */
  write(report: AgentReport): void {
    const temporary = `${this.file}.${process.pid}.tmp`;
    try {
      const descriptor = fs.openSync(temporary, 'w', 0o600);
      try {
        fs.writeSync(descriptor, JSON.stringify(report));
        fs.fsyncSync(descriptor);
      } finally {
        fs.closeSync(descriptor);
      }
      fs.renameSync(temporary, this.file);
      if (this.failing) this.log.info(`${this.file} is written again`);
      this.failing = false;
    } catch (error) {
      if (!this.failing)
        this.log.warn(
          `cannot keep the pending report in ${this.file} (${(error as NodeJS.ErrnoException).code ?? String(error)}): a restart before the server takes it loses it; set state_dir`,
        );
      this.failing = true;
    }
  }

  clear(): void {
    try {
      fs.rmSync(this.file, { force: true });
    } catch {
      // Not writable: write() has said so already.
    }
  }
}
