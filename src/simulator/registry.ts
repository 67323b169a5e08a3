import { forEachBounded } from './bounded.js';
import { jsonOf, messageOf, RequestFailed, type Answer, type EdgewatchClient } from './client.js';

/**
 * The simulator's nodes are recognizable by their serial number, `sim-<n>` (n from 1), and named
 * `sim-node-<n>`. A run with --nodes N uses sim-1 … sim-N: those already registered are reused with a
 * new token (a token is shown only when issued, and the simulator keeps none on disk), the others are
 * registered. Nodes beyond N are left alone.
 */
export const serialOf = (index: number) => `sim-${index}`;
export const nameOf = (index: number) => `sim-node-${index}`;
const SIMULATED_SERIAL = /^sim-([1-9]\d*)$/;
const PAGE_SIZE = 100;

export interface SimulatedNode {
  index: number;
  id: string;
  name: string;
  token: string;
}

export interface Registration {
  nodes: SimulatedNode[];
  reused: number;
  registered: number;
}

/** A failure that ends the run before it reports: one line for the operator. */
export class SimulatorError extends Error {}

interface NodeAnswer {
  id: string;
  name: string;
  hardware_serial_number: string | null;
  token?: string;
}

/** The operator's explanation of an answer the run cannot go on from. */
export function refusal(answer: Answer, doing: string): SimulatorError {
  const message = messageOf(answer);
  if (answer.status === 401) return new SimulatorError(`The service refused the API key (401): ${message}`);
  if (answer.status === 403) {
    return new SimulatorError(
      `The API key may not ${doing} (403): ${message} The simulator needs fleet:read and fleet:write.`,
    );
  }
  return new SimulatorError(`Could not ${doing}: the service answered ${answer.status}: ${message}`);
}

/** Calls the service; no answer at all means the service cannot be reached, which ends the run. */
async function call(
  client: EdgewatchClient,
  base: URL,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
) {
  try {
    return await client.call(method, path, body);
  } catch (error) {
    if (!(error instanceof RequestFailed)) throw error;
    const hint = error.kind === 'refused' ? ' Is it running?' : '';
    throw new SimulatorError(`Cannot reach edgewatch at ${base.href}: ${error.message}.${hint}`);
  }
}

/** The simulated nodes the key can see, by index. */
async function findExisting(client: EdgewatchClient, base: URL): Promise<Map<number, NodeAnswer>> {
  const found = new Map<number, NodeAnswer>();
  for (let page = 0; ; page++) {
    const answer = await call(client, base, 'GET', `/api/v2/node?search=sim-&size=${PAGE_SIZE}&page=${page}`);
    if (answer.status !== 200) throw refusal(answer, 'list nodes');
    const { total_count: total, results } = jsonOf<{ total_count: number; results: NodeAnswer[] }>(answer);
    for (const node of results) {
      const index = SIMULATED_SERIAL.exec(node.hardware_serial_number ?? '')?.[1];
      if (index !== undefined) found.set(Number(index), node);
    }
    if (results.length < PAGE_SIZE || (page + 1) * PAGE_SIZE >= total) return found;
  }
}

/**
 * Makes sim-1 … sim-`count` ready to report, each with a fresh token, at most `concurrency` calls at
 * once. `onProgress` hears of every node made ready. An aborted signal stops it early, with fewer nodes.
 */
export async function prepareNodes(
  client: EdgewatchClient,
  base: URL,
  count: number,
  concurrency: number,
  onProgress: (ready: number) => void,
  signal: AbortSignal,
): Promise<Registration> {
  const existing = await findExisting(client, base);
  const nodes: SimulatedNode[] = [];
  let reused = 0;
  let registered = 0;

  const register = async (index: number): Promise<SimulatedNode> => {
    const answer = await call(client, base, 'POST', '/api/v1/node', {
      name: nameOf(index),
      hardware_serial_number: serialOf(index),
      metadata: { labels: { simulated: 'true' } },
    });
    if (answer.status === 409) {
      throw new SimulatorError(
        `Could not register ${nameOf(index)}: ${messageOf(answer)} (a node with serial number ` +
          `${serialOf(index)} exists that this key cannot see, or another simulator registered it just now).`,
      );
    }
    if (answer.status !== 201) throw refusal(answer, 'register nodes');
    const node = jsonOf<Required<NodeAnswer>>(answer);
    registered++;
    return { index, id: node.id, name: node.name, token: node.token };
  };

  const renew = async (index: number, known: NodeAnswer): Promise<SimulatedNode> => {
    const answer = await call(client, base, 'POST', `/api/v1/node/${encodeURIComponent(known.id)}/token`);
    if (answer.status === 404) return register(index); // removed since the list was read
    if (answer.status !== 200) throw refusal(answer, 'issue node tokens');
    const node = jsonOf<Required<NodeAnswer>>(answer);
    reused++;
    return { index, id: node.id, name: node.name, token: node.token };
  };

  const indexes = Array.from({ length: count }, (_, i) => i + 1);
  await forEachBounded(
    indexes,
    concurrency,
    async (index) => {
      const known = existing.get(index);
      nodes.push(await (known === undefined ? register(index) : renew(index, known)));
      onProgress(nodes.length);
    },
    signal,
  );
  nodes.sort((a, b) => a.index - b.index);
  return { nodes, reused, registered };
}
