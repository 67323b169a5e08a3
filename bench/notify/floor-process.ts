// The undici floor's process: the same signed body, POSTed to the same receiver, as many at once as the
// service's per-webhook limit, over as many kept-alive connections, with nothing else to do. It is a process
// of its own, as the service is, so the receiver in the runner does not share its event loop with the sender.
import { Pool } from 'undici';
import type { FloorMessage, FloorSpec } from './floor.js';

function send(message: FloorMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    if (process.send === undefined) reject(new Error('no IPC channel: run this from bench/run.ts'));
    else process.send(message, undefined, {}, (error) => (error === null ? resolve() : reject(error)));
  });
}

const raw = process.env.BENCH_NOTIFY_FLOOR;
if (raw === undefined) throw new Error('BENCH_NOTIFY_FLOOR is not set');
const spec = JSON.parse(raw) as FloorSpec;
const url = new URL(spec.url);
const pool = new Pool(url.origin, { connections: spec.concurrency, pipelining: 1 });

async function run(): Promise<number> {
  let next = 0;
  let failed = 0;
  const lane = async () => {
    while (next < spec.count) {
      const k = next;
      next += 1;
      try {
        const response = await pool.request({
          method: 'POST',
          path: url.pathname,
          headers: { ...spec.headers, 'x-service-delivery': `${spec.prefix}-${k}` },
          body: spec.body,
        });
        await response.body.text();
        if (response.statusCode < 200 || response.statusCode > 299) failed += 1;
      } catch {
        failed += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, lane));
  return failed;
}

process.on('message', (message: { type: 'go' }) => {
  if (message.type !== 'go') return;
  const cpuBefore = process.cpuUsage();
  run()
    .then(async (failed) => {
      const cpu = process.cpuUsage(cpuBefore);
      await send({ type: 'done', failed, cpuMs: (cpu.user + cpu.system) / 1000 });
      await pool.close();
      process.exit(0);
    })
    .catch(async (error: unknown) => {
      await send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
      process.exit(1);
    });
});

await send({ type: 'ready' });
