import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** `caFile`: the certificate as a file, which the service and Alertmanager trust (NODE_EXTRA_CA_CERTS). */
export type BenchCertificates = { caFile: string; key: string; cert: string };

/** A throwaway self-signed certificate for `localhost` and 127.0.0.1, made with the openssl CLI in `dir`. */
export function makeCertificates(dir: string): BenchCertificates {
  fs.mkdirSync(dir, { recursive: true });
  const [keyFile, caFile] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile];
  const names = ['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'];
  const args = ['req', '-x509', ...key, '-out', caFile, '-days', '2', ...names];
  execFileSync('openssl', args, { stdio: 'pipe' });
  return { caFile, key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(caFile, 'utf8') };
}
