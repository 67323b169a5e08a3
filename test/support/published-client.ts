import { expect } from 'vitest';

/**
 * Requests exactly as the product's published client makes them: its headers on every request (the key in
 * X-API-KEY and the login token in `Authorization: X_AUTH_TOKEN <token>`, either of them empty when not
 * configured), its JSON bodies, and its list reading.
 */

export interface ClientAnswer {
  status: number;
  contentType: string | null;
  body: any;
}

/** What the client is configured with: an API key, or the token of a login, or both. */
export interface ClientCredentials {
  apikey?: string;
  token?: string;
}

export class PublishedClient {
  constructor(
    private readonly baseUrl: string,
    /** The caller's organization, which the client adds to every list it reads without filters. */
    public orgId: string,
    public credentials: ClientCredentials,
  ) {}

  headers(): Record<string, string> {
    return {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      Authorization: `X_AUTH_TOKEN ${this.credentials.token ?? ''}`,
      'X-API-KEY': this.credentials.apikey ?? '',
    };
  }

  async call(method: string, path: string, body?: unknown): Promise<ClientAnswer> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: this.headers(),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return {
      status: res.status,
      contentType: res.headers.get('content-type'),
      body: text === '' ? undefined : JSON.parse(text),
    };
  }

  /** The query string the client adds: its filters, or without any `org_id=<its organization>&own=true`. */
  filterString(filters?: Record<string, string>): string {
    const given =
      filters !== undefined && Object.keys(filters).length > 0
        ? filters
        : { org_id: this.orgId, own: 'true' };
    return `?${Object.entries(given)
      .map(([key, value]) => `${key}=${value}`)
      .join('&')}`;
  }

  /**
   * The client's list reader: the first page with its filters; when total_count is over 25, pages of 100
   * after them — as many as total_count divided by 100, plus one for the rest (which is an empty page past
   * the end when the total is a multiple of 100). Every answer must be 200 and exactly application/json.
   */
  async readList(path: string, filters?: Record<string, string>): Promise<{ results: any[]; pages: number }> {
    const query = this.filterString(filters);
    const first = await this.call('GET', `${path}${query}`);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.contentType).toBe('application/json');
    const total: number = first.body.total_count;
    if (total <= 25) return { results: first.body.results, pages: 1 };
    const pageCount = Math.floor(total / 100) + 1;
    const all: any[] = [];
    for (let page = 0; page < pageCount; page += 1) {
      const next = await this.call('GET', `${path}${query}&page=${page}&size=100`);
      expect(next.status, JSON.stringify(next.body)).toBe(200);
      expect(next.contentType).toBe('application/json');
      expect(next.body.total_count).toBe(total);
      all.push(...next.body.results);
    }
    return { results: all, pages: pageCount };
  }
}
