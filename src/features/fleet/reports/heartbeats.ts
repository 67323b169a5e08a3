import type { AppContext } from '../../../context.js';
import { lastSeenWriter, type LastSeenWriter } from './last-seen-writer.js';
import { applyReport } from './service.js';

/** How often buffered heartbeats reach the database; the liveness sweep allows for this much delay. */
export const HEARTBEAT_FLUSH_MS = 1_000;
/**
 * Small enough that one statement holds SQLite's write lock for a few milliseconds, not a tenth of a second:
 * a report's transaction waiting for it at its start (last-seen-writer.ts) goes in between.
 */
const ROWS_PER_STATEMENT = 100;

/**
 * Reports that change nothing only say "still here": their times are kept in memory and written for all
 * nodes at once every second, in one statement per 100 nodes, instead of one commit per report.
 * Each API process keeps its own buffer; the write only ever moves a time forward, so processes cannot
 * undo each other. A node the sweep judged UNREACHABLE just before its buffered report was written
 * gets that report applied for real (ALIVE again, with its event).
 */
export class HeartbeatBuffer {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly writer: LastSeenWriter;

  constructor(private readonly ctx: AppContext) {
    this.writer = lastSeenWriter(ctx.db);
  }

  record(nodeId: string, at: number): void {
    this.pending.set(nodeId, Math.max(at, this.pending.get(nodeId) ?? at));
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), HEARTBEAT_FLUSH_MS).unref();
  }

  /** Stops the timer, writes what is left and closes the writer. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
    await this.writer.close();
  }

  /** Writes the buffered times now (waiting for a write under way first). */
  async flush(): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.write(batch).finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  private async write(batch: Map<string, number>): Promise<void> {
    const rows = [...batch];
    try {
      for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
        const moved = await this.writer.write(rows.slice(start, start + ROWS_PER_STATEMENT));
        for (const node of moved) {
          if (node.node_state !== 'ALIVE') await applyReport(this.ctx, node.id, {});
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      // Kept for the next flush: a heartbeat is not lost to a database that is away for a moment.
      for (const [id, at] of batch) this.record(id, at);
      this.ctx.logger.warn({ err: error, nodes: batch.size }, 'could not write node heartbeats; retrying');
    }
  }
}
