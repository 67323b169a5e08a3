import type { Worker } from 'node:worker_threads';
import { sqliteFile } from '../../../db/connect.js';
import type { Db } from '../../../db/types.js';
import { moduleWorker } from '../../../lib/module-worker.js';
import { writeLastSeen, type Flushed } from './last-seen.js';

export type ThreadRequest = { id: number; rows: [string, number][] } | 'close';
export type ThreadAnswer = { id: number; moved: Flushed[] } | { id: number; error: string };

/** Writes buffered heartbeats: `writeLastSeen` somewhere, answering with the nodes it moved. */
export interface LastSeenWriter {
  write(rows: [string, number][]): Promise<Flushed[]>;
  close(): Promise<void>;
}

/**
 * On an embedded database kept in a file, the heartbeats are written by a thread with a connection of its own:
 * better-sqlite3 runs each statement on the calling thread, and a second's heartbeats of a large fleet, a few
 * thousand random rows, held the event loop for a tenth of a second or more (docs/benchmarks.md#fleet). The
 * main thread's transactions begin IMMEDIATE (db/connect.ts), so they wait for the writer's lock at their
 * start instead of failing halfway. PostgreSQL, and SQLite in memory, which one connection alone can see,
 * write on the main connection.
 */
export function lastSeenWriter(db: Db): LastSeenWriter {
  const file = sqliteFile(db);
  if (file === undefined) return { write: (rows) => writeLastSeen(db, rows), close: async () => {} };
  return new LastSeenThread(file);
}

interface Waiting {
  resolve: (moved: Flushed[]) => void;
  reject: (error: Error) => void;
}

/** The thread starts with the first write, and holds the process open only while a write is under way. */
class LastSeenThread implements LastSeenWriter {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;

  constructor(private readonly file: string) {}

  write(rows: [string, number][]): Promise<Flushed[]> {
    const worker = this.started();
    const id = this.nextId++;
    if (this.waiting.size === 0) worker.ref();
    return new Promise<Flushed[]>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, rows } satisfies ThreadRequest);
    });
  }

  /** Lets a write under way finish, then closes the thread's connection and the thread. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (worker === undefined) return;
    this.worker = undefined;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.ref();
    worker.postMessage('close' satisfies ThreadRequest);
    await exited;
  }

  private started(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = moduleWorker(new URL('./last-seen-thread.js', import.meta.url), { file: this.file });
    worker.unref();
    worker.on('message', (answer: ThreadAnswer) => this.answered(worker, answer));
    worker.on('error', (error) => this.stopped(worker, error));
    worker.on('exit', (code) => this.stopped(worker, new Error(`the heartbeat writer exited (${code})`)));
    this.worker = worker;
    return worker;
  }

  private answered(worker: Worker, answer: ThreadAnswer): void {
    const waiting = this.waiting.get(answer.id);
    if (waiting === undefined) return;
    this.waiting.delete(answer.id);
    if (this.waiting.size === 0) worker.unref();
    if ('moved' in answer) waiting.resolve(answer.moved);
    else waiting.reject(new Error(answer.error));
  }

  /** A thread that stopped takes its writes with it (the buffer keeps their times); the next write starts one. */
  private stopped(worker: Worker, error: Error): void {
    if (this.worker === worker) this.worker = undefined;
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
  }
}
