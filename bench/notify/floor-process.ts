// The undici floor's process: the same signed body, POSTed to the same receiver, as many at once as the
// service's per-webhook limit, over as many kept-alive connections, with nothing else to do. A process of its
// own, as the service is, so the receiver in the runner does not share its event loop with the sender.
import { Pool } from 'undici';

/** `round`: in each request's X-Service-Delivery, so that every round's ids are its own. */
const spec = JSON.parse(process.env.BENCH_NOTIFY_FLOOR ?? '') as {
  url: string;
  headers: Record<string, string>;
  body: string;
  count: number;
  concurrency: number;
  round: number;
};
const url = new URL(spec.url);
const pool = new Pool(url.origin, { connections: spec.concurrency, pipelining: 1 });
let [next, failed] = [0, 0];

async function post(k: number) {
  try {
    const headers = { ...spec.headers, 'x-service-delivery': `floor-${spec.round}-${k}` };
    const response = await pool.request({ method: 'POST', path: url.pathname, headers, body: spec.body });
    await response.body.dump();
    if (response.statusCode < 200 || response.statusCode > 299) failed += 1;
  } catch {
    failed += 1;
  }
}

process.once('message', () => {
  const cpuBefore = process.cpuUsage();
  const lane = async () => {
    for (let k = next++; k < spec.count; k = next++) await post(k);
  };
  void Promise.all(Array.from({ length: spec.concurrency }, lane)).then(() => {
    const cpu = process.cpuUsage(cpuBefore);
    const done = { type: 'done', failed, cpuMs: (cpu.user + cpu.system) / 1000 };
    process.send!(done, undefined, {}, () => process.exit(0));
  });
});
process.send!({ type: 'ready' });
