import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  key: string;
  cert: string;
}

export interface TestCertificates {
  /** The test authority's certificate: trust this to accept `server` and `otherName`. */
  ca: string;
  /** Signed by `ca` for `localhost` and the IP 127.0.0.1. */
  server: KeyPair;
  /** Signed by `ca` for `other.test` only: valid chain, wrong host for `localhost`. */
  otherName: KeyPair;
  /** Signs itself, for `localhost` and 127.0.0.1. */
  selfSigned: KeyPair;
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

let cached: TestCertificates | undefined;

/** A throwaway certificate authority made with the openssl CLI, once per test process. */
export function testCertificates(): TestCertificates {
  cached ??= makeCertificates();
  return cached;
}

function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'edgewatch-tls-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  try {
    openssl(
      ...['req', '-x509', ...EC_KEY, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2'],
      ...['-subj', '/CN=edgewatch test CA'],
      ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
    );
    const signed = (name: string, commonName: string, altNames: string): KeyPair => {
      openssl(
        'req',
        ...EC_KEY,
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.csr`,
        '-subj',
        `/CN=${commonName}`,
      );
      writeFileSync(
        file(`${name}.ext`),
        `subjectAltName=${altNames}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
      );
      openssl(
        ...['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial'],
        ...['-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`],
      );
      return {
        key: readFileSync(file(`${name}.key`), 'utf8'),
        cert: readFileSync(file(`${name}.crt`), 'utf8'),
      };
    };
    const server = signed('server', 'localhost', 'DNS:localhost,IP:127.0.0.1');
    const otherName = signed('other', 'other.test', 'DNS:other.test');
    openssl(
      ...['req', '-x509', ...EC_KEY, '-keyout', 'self.key', '-out', 'self.crt', '-days', '2'],
      ...['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
    );
    return {
      ca: readFileSync(file('ca.crt'), 'utf8'),
      server,
      otherName,
      selfSigned: {
        key: readFileSync(file('self.key'), 'utf8'),
        cert: readFileSync(file('self.crt'), 'utf8'),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
