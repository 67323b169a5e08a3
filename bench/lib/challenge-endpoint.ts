import { createHmac } from 'node:crypto';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { BenchCertificates } from './tls.js';

export interface ChallengeEndpoint {
  /** `https://localhost:<port>/hook`: a name, so the service resolves and vets it as it would a real one. */
  url: string;
  /** Challenges answered so far. */
  answered(): number;
  close(): Promise<void>;
}

/**
 * A webhook endpoint that answers the verification challenge at once and correctly: lower-hex
 * HMAC-SHA256(secret, X-Service-Timestamp + "." + challenge). Computed here with node:crypto, not with the
 * service's own code, so a wrong answer from either side shows as a FAILED verification.
 */
export async function startChallengeEndpoint(
  certificates: BenchCertificates,
  secret: string,
): Promise<ChallengeEndpoint> {
  let answered = 0;
  const server = createServer({ key: certificates.key, cert: certificates.cert }, (request, response) => {
    const challenge = new URL(request.url ?? '/', 'https://localhost').searchParams.get('challenge');
    const timestamp = request.headers['x-service-timestamp'];
    if (challenge === null || typeof timestamp !== 'string') {
      response.writeHead(400, { 'content-type': 'text/plain' }).end('challenge and timestamp required');
      return;
    }
    const answer = createHmac('sha256', secret).update(`${timestamp}.${challenge}`, 'utf8').digest('hex');
    answered += 1;
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ challenge, challenge_response: answer }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://localhost:${port}/hook`,
    answered: () => answered,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
