// A collector's OTLP/HTTP traces endpoint for the bench: takes every export and answers success, counting the
// bytes, so the service's cost of tracing is measured against a receiver that costs it nothing more.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startOtlpSink() {
  let exports = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      exports += 1;
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => ({ exports, bytes }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
