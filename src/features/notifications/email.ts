import type { OutgoingEmail } from '../../mail/mailer.js';
import type { NotificationPayload } from './payload.js';

const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

/** The e-mail of a notification: the sentence as subject, then the facts a person scans for, and a link. */
export function notificationEmail(to: string, payload: NotificationPayload, link: string): OutgoingEmail {
  const rows: [string, string][] = [
    ['What', `${payload.display_type}: ${payload.condition}`],
    ['Node', payload.node.name],
    ...(payload.resource.kind === 'node'
      ? []
      : [[capitalized(payload.resource.kind), payload.resource.name] as [string, string]]),
    ['Organization', payload.organization.name],
    ['Since', utc(payload.occurred_at)],
    ['Before', payload.previous_state ?? '(none)'],
    ['Now', payload.current_state],
    ['Alert', payload.alert?.name ?? '(test)'],
  ];
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const text = [
    payload.message,
    '',
    ...rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`),
    '',
    `Details: ${link}`,
    '',
  ].join('\n');
  return { to, subject: `${payload.message.replace(/\.$/, '')} (${payload.organization.name})`, text };
}

function capitalized(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** Notifications a digest lists one by one; the rest are counted. */
export const DIGEST_LISTED = 50;

/**
 * One e-mail for a minute's worth of notifications past the first few: how many of each type and state,
 * the first DIGEST_LISTED, and a link to the whole list.
 */
export function digestEmail(
  to: string,
  payloads: readonly NotificationPayload[],
  window: { from: number; to: number; publicUrl: string },
): OutgoingEmail {
  const counts = new Map<string, number>();
  for (const payload of payloads) {
    const key = `${payload.display_type}: ${payload.condition}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const from = new Date(window.from).toISOString();
  const until = new Date(window.to).toISOString();
  const list = `${window.publicUrl}/api/v2/notification?start_date=${encodeURIComponent(from)}&end_date=${encodeURIComponent(until)}&size=100`;
  const listed = payloads.slice(0, DIGEST_LISTED);
  const text = [
    `${payloads.length} more notifications between ${utc(from)} and ${utc(until)}, together in this e-mail so that a storm of them does not bury your inbox.`,
    '',
    ...[...counts]
      .sort((a, b) => b[1] - a[1])
      .map(([what, count]) => `${String(count).padStart(6)}  ${what}`),
    '',
    ...listed.map(
      (payload) => `- ${payload.message} (${payload.organization.name}, ${utc(payload.occurred_at)})`,
    ),
    ...(payloads.length > listed.length ? [`… and ${payloads.length - listed.length} more.`] : []),
    '',
    `All of them: ${list}`,
    '',
  ].join('\n');
  return { to, subject: `${payloads.length} more notifications in one minute (${utc(from)})`, text };
}
