import type { ResourceKind } from '../notifications/types.js';
import type { IncidentStatus, MemberChange, MessageReason } from './timeline.js';

/**
 * The body of an incident's message to a webhook (`type: "INCIDENT"`), from the message the timeline made
 * and the facts of its members. Pure: Slack, Teams, PagerDuty and e-mail render from this body.
 */

/** At most this many members are listed; the rest are counted and paged at `members_url`. */
export const LISTED_MEMBERS = 100;

export interface Named {
  id: string;
  name: string;
}

/** A member as a message shows it. */
export interface MemberFacts {
  resource: { kind: ResourceKind; id: string; name: string };
  node: Named;
  organization: Named;
  condition: string;
  previous_state: string | null;
  current_state: string;
  /** When its current state began, ISO 8601. */
  since: string;
  change: Exclude<MemberChange, null> | 'firing';
}

export interface IncidentFacts {
  id: string;
  sequence: number;
  status: IncidentStatus;
  reason: MessageReason;
  openedAt: number;
  resolvedAt: number | null;
  alert: Named;
  organization: Named;
  /** Tunnels and services whose change is folded into their UNREACHABLE node. */
  behindUnreachable: number;
  flaps: number;
  /** Where every member is paged. */
  membersUrl: string;
}

export interface IncidentBody {
  type: 'INCIDENT';
  incident: {
    id: string;
    sequence: number;
    status: IncidentStatus;
    reason: MessageReason;
    opened_at: string;
    resolved_at: string | null;
    members_omitted: number;
    members_url: string;
  };
  alert: Named;
  organization: Named;
  counts: {
    firing: number;
    new: number;
    recovered: number;
    flaps: number;
    behind_unreachable: number;
    by_condition: Record<string, number>;
  };
  members: MemberFacts[];
  message: string;
}

const RANK: Record<MemberFacts['change'], number> = { new: 0, recovered: 1, firing: 2 };

const plural = (n: number, one: string, many = `${one}s`) =>
  `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** What a person reads first: how many are in trouble where, what changed since the last message. */
function sentence(facts: IncidentFacts, counts: IncidentBody['counts']): string {
  const where = facts.organization.name;
  if (facts.status === 'resolved') return `${where}: all recovered; the incident is resolved.`;
  const conditions = Object.entries(counts.by_condition)
    .sort(([, a], [, b]) => b - a)
    .map(([condition, n]) => `${n.toLocaleString('en-US')} ${condition}`)
    .join(', ');
  const changes = [
    counts.new > 0 ? `+${counts.new.toLocaleString('en-US')} new` : '',
    counts.recovered > 0 ? `${counts.recovered.toLocaleString('en-US')} recovered` : '',
    counts.flaps > 0 ? plural(counts.flaps, 'flap') : '',
  ].filter((part) => part !== '');
  return `${where}: ${conditions || 'nothing firing'}${changes.length > 0 ? ` (${changes.join(', ')})` : ''}.`;
}

export function incidentBody(facts: IncidentFacts, members: readonly MemberFacts[]): IncidentBody {
  const firing = members.filter((member) => member.change !== 'recovered');
  const byCondition: Record<string, number> = {};
  for (const member of firing) byCondition[member.condition] = (byCondition[member.condition] ?? 0) + 1;
  const counts = {
    firing: firing.length,
    new: members.filter((member) => member.change === 'new').length,
    recovered: members.filter((member) => member.change === 'recovered').length,
    flaps: facts.flaps,
    behind_unreachable: facts.behindUnreachable,
    by_condition: byCondition,
  };
  // Changed ones first, so that truncation keeps the news.
  const listed = [...members]
    .sort((a, b) => RANK[a.change] - RANK[b.change] || a.since.localeCompare(b.since))
    .slice(0, LISTED_MEMBERS);
  return {
    type: 'INCIDENT',
    incident: {
      id: facts.id,
      sequence: facts.sequence,
      status: facts.status,
      reason: facts.reason,
      opened_at: new Date(facts.openedAt).toISOString(),
      resolved_at: facts.resolvedAt === null ? null : new Date(facts.resolvedAt).toISOString(),
      members_omitted: members.length - listed.length,
      members_url: facts.membersUrl,
    },
    alert: facts.alert,
    organization: facts.organization,
    counts,
    members: listed,
    message: sentence(facts, counts),
  };
}
