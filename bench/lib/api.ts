import { Pool } from 'undici';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * The service's API as the admin, over one kept-alive connection: how scenarios create their data, and how
 * timed calls are made without a new connection (or a fetch layer) inside each measurement.
 */
export class AdminApi {
  private readonly pool: Pool;

  constructor(
    baseUrl: string,
    private readonly adminKey: string,
  ) {
    this.pool = new Pool(baseUrl, { connections: 1 });
  }

  /** Any answer outside 2xx throws, with the body, because the run would measure the wrong thing. */
  async call<T = any>(method: Method, path: string, body?: unknown): Promise<T> {
    const response = await this.pool.request({
      method,
      path,
      headers: {
        'x-api-key': this.adminKey,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await response.body.text();
    if (response.statusCode < 200 || response.statusCode > 299) {
      throw new Error(`${method} ${path} answered ${response.statusCode}: ${text}`);
    }
    return JSON.parse(text) as T;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
