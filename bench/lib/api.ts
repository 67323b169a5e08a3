/** The service's API as the admin: how sections create their data, act on it and wait for it. */
export function adminApi(baseUrl: string, key: string) {
  const request = async (method: string, path: string, body?: unknown) => {
    const json: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    const init = {
      method,
      headers: { 'x-api-key': key, ...json },
      body: body === undefined ? null : JSON.stringify(body),
    };
    const response = await fetch(baseUrl + path, init);
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  /** Any answer outside 2xx throws, with the body: the run would measure the wrong thing. */
  const call = async (method: string, path: string, body?: unknown): Promise<any> => {
    const answer = await request(method, path, body);
    if (answer.status >= 200 && answer.status < 300) return answer.body;
    throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  };
  const count = async (path: string) =>
    Number((await call('GET', `${path}${path.includes('?') ? '&' : '?'}size=1`)).total_count);
  return { request, call, count };
}

export type AdminApi = ReturnType<typeof adminApi>;
