import { answerChallenge, verifySignature } from '../../src/receiver/index.js';
import type { TestApp } from './harness.js';
import { startHttpsReceiver, type HttpsReceiver, type ReceiverHandler } from './https-receiver.js';
import { testCertificates } from './tls.js';

/** The env and trust a test app needs to call the local HTTPS receiver. */
export function receiverAccess() {
  return {
    env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' },
    extraTrustedCertificates: [testCertificates().ca],
  };
}

/**
 * A receiver that behaves as a correct client endpoint, using the receiver kit as a client would:
 * answers challenges with the secret of the moment, checks notification signatures.
 */
export function correctEndpoint(secretOf: () => string): ReceiverHandler {
  return (request, response) => {
    const url = new URL(request.url, 'https://receiver.test');
    const timestamp = String(request.headers['x-service-timestamp'] ?? '');
    const challenge = url.searchParams.get('challenge');
    if (request.method === 'GET' && challenge !== null) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answerChallenge(secretOf(), timestamp, challenge)));
      return;
    }
    const verdict = verifySignature(secretOf(), {
      body: request.body,
      timestamp,
      signature: request.headers['x-service-signature'] as string | undefined,
    });
    response.writeHead(verdict.ok ? 200 : 401, { 'content-type': 'application/json' });
    response.end(JSON.stringify(verdict.ok ? { received: true } : { error: verdict.reason }));
  };
}

export interface ReceiverWithSecret {
  receiver: HttpsReceiver;
  secret: { value: string };
}

export const RECEIVER_SECRET = 'receiver-secret-0123456789abcdef';

/** A correct endpoint; every webhook made with `enabledWebhook` on it shares its secret. */
export async function startCorrectReceiver(): Promise<ReceiverWithSecret> {
  const secret = { value: RECEIVER_SECRET };
  const receiver = await startHttpsReceiver(
    testCertificates().server,
    correctEndpoint(() => secret.value),
  );
  return { receiver, secret };
}

/** Creates a webhook through the API and verifies it against a correct receiver: the real path. */
export async function enabledWebhook(
  t: TestApp,
  endpoint: ReceiverWithSecret,
  options: { key?: string; name?: string } = {},
): Promise<{ id: string; secret: string }> {
  const created = await t.request('POST', '/api/v1/webhook', {
    ...(options.key === undefined ? {} : { key: options.key }),
    body: {
      name: options.name ?? 'Receiver',
      url: `${endpoint.receiver.url}/hook`,
      secret: endpoint.secret.value,
    },
  });
  if (created.status !== 201) throw new Error(`webhook creation failed: ${created.text}`);
  const verified = await t.request('POST', `/api/v1/webhook/${created.body.id}/verify`, {
    ...(options.key === undefined ? {} : { key: options.key }),
  });
  if (verified.body?.status !== 'SUCCESS') throw new Error(`webhook verification failed: ${verified.text}`);
  return { id: created.body.id as string, secret: endpoint.secret.value };
}
