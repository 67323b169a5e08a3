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
