import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface BenchCertificates {
  /** The throwaway authority's certificate, as a file: what NODE_EXTRA_CA_CERTS points at. */
  caFile: string;
  ca: string;
  /** Signed by the authority for `localhost` and 127.0.0.1. */
  key: string;
  cert: string;
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A certificate authority and one server certificate made with the openssl CLI, inside `dir`. */
export function makeCertificates(dir: string): BenchCertificates {
  fs.mkdirSync(dir, { recursive: true });
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(
    ...['req', '-x509', ...EC_KEY, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2'],
    ...['-subj', '/CN=edgewatch bench CA'],
    ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
  );
  openssl('req', ...EC_KEY, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  fs.writeFileSync(
    path.join(dir, 'server.ext'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  openssl(
    ...['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial'],
    ...['-out', 'server.crt', '-days', '2', '-extfile', 'server.ext'],
  );
  const read = (name: string) => fs.readFileSync(path.join(dir, name), 'utf8');
  return {
    caFile: path.join(dir, 'ca.pem'),
    ca: read('ca.pem'),
    key: read('server.key'),
    cert: read('server.crt'),
  };
}
