import type { OutgoingEmail } from '../../mail/mailer.js';
import { incidentHeadline } from './channel-messages.js';
import type { IncidentBody, MemberFacts } from './message-body.js';

/**
 * An incident's message as an e-mail: the headline as subject, the sentence, what changed, the members
 * listed (changed ones first, at most the body's 100) and a link to the incident in the console.
 */

const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

function line(member: MemberFacts): string {
  const what =
    member.resource.kind === 'node' ? member.node.name : `${member.node.name} / ${member.resource.name}`;
  const change = member.change === 'firing' ? '' : ` [${member.change}]`;
  return `- ${what}: ${member.current_state} since ${utc(member.since)}${change}`;
}

export function incidentEmail(to: string, body: IncidentBody, link: string): OutgoingEmail {
  const omitted = body.incident.members_omitted;
  const text = [
    body.message,
    '',
    `Alert:    ${body.alert.name}`,
    `Opened:   ${utc(body.incident.opened_at)}`,
    ...(body.incident.resolved_at === null ? [] : [`Resolved: ${utc(body.incident.resolved_at)}`]),
    ...(body.counts.behind_unreachable > 0
      ? [`Behind UNREACHABLE nodes (not listed): ${body.counts.behind_unreachable}`]
      : []),
    '',
    ...body.members.map(line),
    ...(omitted > 0 ? [`… and ${omitted.toLocaleString('en-US')} more.`] : []),
    '',
    `The incident: ${link}`,
    '',
  ].join('\n');
  return { to, subject: incidentHeadline(body), text };
}
