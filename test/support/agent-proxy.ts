import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the agent made, as the proxy saw it. */
export interface SeenRequest {
  at: number;
  /** The body's length: 0 for a heartbeat. */
  bytes: number;
  body: string;
  status: number;
}

/** An answer the proxy gives itself instead of passing the request on. */
export interface Override {
  status: number;
  headers?: Record<string, string>;
}

/**
 * A proxy between the agent and the real service: it records every request, passes it on, and can answer
 * by itself (429 with Retry-After) or stop listening (the service out of reach) and come back on its port.
 */
export class AgentProxy {
  readonly seen: SeenRequest[] = [];
  /** Answers, in turn, given instead of the service's. */
  readonly overrides: Override[] = [];
  private server: http.Server | undefined;
  port = 0;

  constructor(private readonly target: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and drops open connections: the agent finds nobody there. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const override = this.overrides.shift();
    if (override !== undefined) {
      this.seen.push({ at: Date.now(), bytes: body.length, body, status: override.status });
      res.writeHead(override.status, { 'content-type': 'application/json', ...override.headers });
      res.end(JSON.stringify({ statusCode: override.status, message: 'from the test proxy' }));
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of ['x-node-token', 'content-type', 'user-agent'])
      if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
    const answer = await fetch(`${this.target}${req.url}`, {
      method: req.method,
      headers,
      ...(body === '' ? {} : { body }),
    });
    const text = await answer.text();
    this.seen.push({ at: Date.now(), bytes: body.length, body, status: answer.status });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
    res.end(text);
  }
}
