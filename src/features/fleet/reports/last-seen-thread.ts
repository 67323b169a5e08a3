// The entry of the last-seen writer's thread (last-seen-writer.ts): a connection of its own to the embedded
// database, writing each batch of heartbeats it is sent and answering with the nodes it moved.
import { parentPort, workerData } from 'node:worker_threads';
import { connectDatabase } from '../../../db/connect.js';
import { writeLastSeen } from './last-seen.js';
import type { ThreadAnswer, ThreadRequest } from './last-seen-writer.js';

const port = parentPort!;
const db = connectDatabase({ kind: 'sqlite', file: (workerData as { file: string }).file });

port.on('message', (message: ThreadRequest) => {
  if (message === 'close') {
    void db.destroy().finally(() => port.close());
    return;
  }
  writeLastSeen(db, message.rows).then(
    (moved) => port.postMessage({ id: message.id, moved } satisfies ThreadAnswer),
    (error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      port.postMessage({ id: message.id, error: reason } satisfies ThreadAnswer);
    },
  );
});
