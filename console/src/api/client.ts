/** The one way the console talks to the service: the same API and key header every client uses. */

const KEY_STORAGE = 'edgewatch.apiKey';

export interface FieldProblem {
  field: string;
  message: string;
}

/** An answer other than 2xx, with the API's own words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: FieldProblem[] = [],
  ) {
    super(message);
  }

  /** The API's message for one field of a form (`settings.alert_me`, `url`, …), if it named it. */
  about(field: string): string | undefined {
    return this.details.find((detail) => detail.field === field)?.message;
  }
}

export const storedKey = {
  get: (): string | null => sessionStorage.getItem(KEY_STORAGE),
  set: (key: string) => sessionStorage.setItem(KEY_STORAGE, key),
  clear: () => sessionStorage.removeItem(KEY_STORAGE),
};

let signedOut: () => void = () => undefined;

/** Called when the service answers 401: the key is gone or revoked, so the console returns to sign-in. */
export function onSignedOut(handler: () => void): void {
  signedOut = handler;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export async function api<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const key = storedKey.get();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key !== null) headers['x-api-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, 'The service cannot be reached. Check that it is running, then try again.');
  }
  const data = await readJson(response);
  if (response.ok) return data as T;
  if (response.status === 401 && key !== null) {
    storedKey.clear();
    signedOut();
  }
  const problem = (data ?? {}) as { message?: unknown; details?: unknown };
  const message =
    typeof problem.message === 'string'
      ? problem.message
      : `The service answered ${response.status} ${response.statusText}.`;
  throw new ApiError(
    response.status,
    message,
    Array.isArray(problem.details) ? (problem.details as FieldProblem[]) : [],
  );
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A query string from the values that are set. */
export function query(values: Record<string, string | number | boolean | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

export interface Page<T> {
  total_count: number;
  results: T[];
}
