import {
  pagerDutySeverity,
  teamsCard,
  type ChannelLinks,
  type ChannelRenderers,
} from '../channels/render.js';
import type { IncidentBody, MemberFacts } from './message-body.js';

/**
 * An incident's message on Slack, Teams and PagerDuty, from its webhook body. Pure. A person reads a
 * headline ("Acme Paris: 500 nodes UNREACHABLE (+488)"), up to 20 names and how many more, and a line for
 * the recovered; PagerDuty keeps one incident per edgewatch incident and is updated in place.
 */

/** Names a chat message lists; the rest are "and N more", with the link. */
export const NAMED_MEMBERS = 20;
/** Members a PagerDuty event carries in its details. */
export const PAGERDUTY_MEMBERS = 50;

const KINDS: Record<MemberFacts['resource']['kind'], [string, string]> = {
  node: ['node', 'nodes'],
  tunnel: ['tunnel', 'tunnels'],
  service: ['service', 'services'],
};

const count = (n: number) => n.toLocaleString('en-US');

/** "Acme Paris: 500 nodes UNREACHABLE (+488)", or the resolve. */
export function incidentHeadline(body: IncidentBody): string {
  const where = body.organization.name;
  if (body.incident.status === 'resolved') return `${where}: resolved (${body.alert.name})`;
  const kinds = new Set(body.members.map((member) => member.resource.kind));
  const [one, many] = kinds.size === 1 ? KINDS[[...kinds][0]!] : ['resource', 'resources'];
  const [top] = Object.entries(body.counts.by_condition).sort(([, a], [, b]) => b - a);
  const firing = body.counts.firing;
  const what = `${count(firing)} ${firing === 1 ? one : many}${top === undefined ? '' : ` ${top[0]}`}`;
  return `${where}: ${what}${body.counts.new > 0 ? ` (+${count(body.counts.new)})` : ''}`;
}

const label = (member: MemberFacts) =>
  member.resource.kind === 'node' ? member.node.name : `${member.node.name} / ${member.resource.name}`;

/** The firing members named, how many more there are, and the recovered ones. */
function lines(body: IncidentBody): { named: string; more: number; recovered: string | undefined } {
  const firing = body.members.filter((member) => member.change !== 'recovered');
  const recovered = body.members.filter((member) => member.change === 'recovered');
  const named = firing.slice(0, NAMED_MEMBERS).map(label).join(', ');
  const more = body.counts.firing - Math.min(firing.length, NAMED_MEMBERS);
  // The recovered may lie beyond the members listed (new ones come first): then they are counted only.
  const recoveredNames = recovered.slice(0, NAMED_MEMBERS).map(label).join(', ');
  const recoveredLine =
    body.counts.recovered === 0
      ? undefined
      : `${count(body.counts.recovered)} recovered${recoveredNames === '' ? '' : `: ${recoveredNames}`}` +
        (body.counts.recovered > Math.min(recovered.length, NAMED_MEMBERS) && recoveredNames !== ''
          ? ', …'
          : '');
  return { named, more, recovered: recoveredLine };
}

/** Slack's mrkdwn gives &, < and > a meaning of their own; a section's text is at most 3,000 characters. */
const slackText = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').slice(0, 3_000);

function slackMessage(body: IncidentBody, links: ChannelLinks) {
  const { named, more, recovered } = lines(body);
  const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text: slackText(text) } });
  return {
    text: slackText(incidentHeadline(body)),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: incidentHeadline(body).slice(0, 150) } },
      section(body.message),
      ...(named === '' ? [] : [section(named + (more > 0 ? ` and ${count(more)} more` : ''))]),
      ...(recovered === undefined ? [] : [section(recovered)]),
      {
        type: 'actions',
        elements: [
          { type: 'button', text: { type: 'plain_text', text: 'Open the incident' }, url: links.console },
        ],
      },
    ],
  };
}

function teamsMessage(body: IncidentBody, links: ChannelLinks) {
  const { named, more, recovered } = lines(body);
  const text = (value: string, extra: Record<string, unknown> = {}) => ({
    type: 'TextBlock',
    wrap: true,
    text: value,
    ...extra,
  });
  return teamsCard(
    [
      text(incidentHeadline(body), { size: 'Large', weight: 'Bolder' }),
      text(body.message),
      ...(named === '' ? [] : [text(named + (more > 0 ? ` and ${count(more)} more` : ''))]),
      ...(recovered === undefined ? [] : [text(recovered, { isSubtle: true })]),
    ],
    { title: 'Open the incident', url: links.console },
  );
}

function pagerDutyEvent(routingKey: string, body: IncidentBody, links: ChannelLinks) {
  const [top] = Object.entries(body.counts.by_condition).sort(([, a], [, b]) => b - a);
  return {
    routing_key: routingKey,
    // The same key for every message: updates re-trigger (append, do not page again), one resolve ends it.
    event_action: body.incident.status === 'resolved' ? 'resolve' : 'trigger',
    dedup_key: `edgewatch:${body.incident.id}`,
    payload: {
      summary: incidentHeadline(body).slice(0, 1_024),
      source: body.organization.name,
      severity: pagerDutySeverity(top?.[0] ?? ''),
      timestamp: body.incident.opened_at,
      group: body.organization.name,
      class: 'INCIDENT',
      custom_details: {
        message: body.message,
        counts: body.counts,
        members: body.members.slice(0, PAGERDUTY_MEMBERS),
        members_omitted: body.incident.members_omitted + Math.max(0, body.members.length - PAGERDUTY_MEMBERS),
        members_url: body.incident.members_url,
        incident_id: body.incident.id,
        sequence: body.incident.sequence,
      },
    },
    links: [{ href: links.console, text: 'Open the incident' }],
  };
}

/** How an incident's message is put to each channel type (channels/render.ts renderChannelRequest). */
export const INCIDENT_RENDERERS: ChannelRenderers<IncidentBody> = {
  slack: slackMessage,
  teams: teamsMessage,
  pagerDuty: pagerDutyEvent,
};
