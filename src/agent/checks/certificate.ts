import { X509Certificate } from 'node:crypto';
import { parsed, unreadable, type Parsed } from './result.js';

/** A certificate's validity period, as a report carries it (ISO 8601, UTC). */
export interface CertificateValidity {
  not_before: string;
  not_after: string;
}

const FIRST_PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
// OpenSSL's ASN1_TIME_print, which X509Certificate's validFrom and validTo use: `Jan  1 00:00:00 2026 GMT`.
const OPENSSL_TIME = /^([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d+)? (\d{4}) GMT$/;

/**
 * The validity of the first certificate in `pem` (a chain lists the device's own certificate first).
 * Text around the PEM blocks, such as `openssl x509 -text` output, is passed over.
 */
export function certificateValidity(pem: string): Parsed<CertificateValidity> {
  const block = FIRST_PEM_CERTIFICATE.exec(pem)?.[0];
  if (block === undefined) return unreadable('no PEM certificate (no BEGIN/END CERTIFICATE block)');
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(block);
  } catch (error) {
    return unreadable(
      `not a readable certificate: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const notBefore = isoFromOpensslTime(certificate.validFrom);
  const notAfter = isoFromOpensslTime(certificate.validTo);
  if (notBefore === undefined || notAfter === undefined) {
    return unreadable(`unexpected validity dates: ${certificate.validFrom} – ${certificate.validTo}`);
  }
  if (notBefore >= notAfter) return unreadable(`validity period is empty: ${notBefore} – ${notAfter}`);
  return parsed({ not_before: notBefore, not_after: notAfter });
}

// Explicit rather than Date's own parsing of this non-standard form, which engines need not accept.
function isoFromOpensslTime(text: string): string | undefined {
  const found = OPENSSL_TIME.exec(text);
  if (found === null) return undefined;
  const [, monthName, day, hours, minutes, seconds, year] = found.map(String);
  const month = MONTHS.indexOf(monthName!);
  const date = new Date(0);
  date.setUTCFullYear(Number(year), month, Number(day));
  date.setUTCHours(Number(hours), Number(minutes), Number(seconds));
  // Out-of-range fields (an unknown month, Feb 30, hour 24) roll over into another day.
  const sameDay = date.getUTCMonth() === month && date.getUTCDate() === Number(day);
  return sameDay ? date.toISOString() : undefined;
}
