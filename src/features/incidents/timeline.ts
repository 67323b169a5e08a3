/**
 * When an incident speaks (docs/decisions/0008-incidents.md): the rules of "when messages go out" as pure
 * functions of the incident, its members and the time. The caller keeps both as rows and writes what these
 * return in the transaction of the change (a member firing or recovering) or of the flush (the due time).
 *
 * - The first member's message is made at once; members that fire within `group_wait` of it go out together
 *   at its end; after that at most one update per `group_interval` from the last message, and only when the
 *   membership changed.
 * - An update lists new members, then recovered ones, then those still firing; a recovered member is listed
 *   once and then dropped.
 * - When the last member recovers, the resolve goes out `group_wait` later unless one fired again, never
 *   waiting for `group_interval`.
 * - A member that recovers and fires again within one `group_interval` is a flap: counted, not new, and a
 *   flap alone sends nothing.
 * - A firing incident with nothing new is sent again after `repeat_interval` (0: never).
 * - For a type without a good state nothing recovers: the incident batches events and resolves, silently,
 *   after one quiet `group_interval`.
 */

export interface Timing {
  waitMs: number;
  intervalMs: number;
  /** 0: never repeat. */
  repeatMs: number;
  /** Whether the type's members can recover (NODE_STATE_CHANGE can; NODE_IP_CHANGE cannot). */
  recovers: boolean;
}

export type IncidentStatus = 'firing' | 'resolved';

export interface Incident {
  status: IncidentStatus;
  openedAt: number;
  resolvedAt: number | null;
  /** The last message's sequence; 1 is the opening message. */
  sequence: number;
  lastMessageAt: number;
  /** When the membership last changed (a flap included). */
  lastChangeAt: number;
  /** When the flusher is to look at the incident next; null once it is resolved. */
  dueAt: number | null;
  /** Flaps since the last message. */
  flaps: number;
  /** Members firing now: a change reads one member, not all of them. */
  firing: number;
}

/** What a member has done since the last message, if anything. */
export type MemberChange = 'new' | 'recovered' | null;

export interface Member {
  key: string;
  firing: boolean;
  /** When its current state began. */
  since: number;
  change: MemberChange;
  /** When it last recovered, to tell a flap from a new trouble; kept one `group_interval` after it is told. */
  recoveredAt: number | null;
  flaps: number;
  /** Whether a message has listed it firing: one that never was is new again if it comes back. */
  announced: boolean;
}

export type MessageReason = 'opened' | 'updated' | 'repeat' | 'resolved';

export interface Message {
  sequence: number;
  reason: MessageReason;
  status: IncidentStatus;
  /** New members, then recovered ones, then those still firing. */
  members: Member[];
  counts: { firing: number; new: number; recovered: number; flaps: number };
}

/** The incident's new state and its members', with the message to make now, if any. */
export interface Step {
  incident: Incident;
  members: Member[];
  message: Message | null;
}

/** A member's change: the incident's new state and the member's (unchanged: the same object). */
export interface Change {
  incident: Incident;
  member: Member;
}

const ORDER: Record<string, number> = { new: 0, recovered: 1, firing: 2 };

function message(incident: Incident, members: readonly Member[], reason: MessageReason): Message {
  const rank = (member: Member) => ORDER[member.change ?? 'firing']!;
  // A recovery is listed in one message; after it, the member is kept only to recognise a flap.
  const listed = members
    .filter((member) => member.firing || member.change === 'recovered')
    .sort((a, b) => rank(a) - rank(b) || a.since - b.since);
  return {
    sequence: incident.sequence,
    reason,
    status: incident.status,
    members: listed,
    counts: {
      firing: members.filter((member) => member.firing).length,
      new: members.filter((member) => member.change === 'new').length,
      recovered: members.filter((member) => member.change === 'recovered').length,
      flaps: incident.flaps,
    },
  };
}

/**
 * After a message: the changes are told and the flap counts start over. A recovered member stays one
 * `group_interval` after its recovery (a flap within it is not news), unlisted.
 */
function told(members: readonly Member[], now: number, timing: Timing): Member[] {
  return members
    .filter(
      (member) =>
        member.firing || (member.recoveredAt !== null && now - member.recoveredAt < timing.intervalMs),
    )
    .map((member) => ({ ...member, change: null, flaps: 0, announced: member.announced || member.firing }));
}

/** The next time an update may go out: the end of `group_wait` after the opening, else `group_interval` on. */
function nextUpdateAt(incident: Incident, timing: Timing, now: number): number {
  const earliest =
    incident.sequence === 1 ? incident.openedAt + timing.waitMs : incident.lastMessageAt + timing.intervalMs;
  return Math.max(now, earliest);
}

/** The first member fires: the incident opens, and its first message is made at once. */
export function open(key: string, now: number, timing: Timing): Step {
  const incident: Incident = {
    status: 'firing',
    openedAt: now,
    resolvedAt: null,
    sequence: 1,
    lastMessageAt: now,
    lastChangeAt: now,
    dueAt: now + timing.waitMs,
    flaps: 0,
    firing: 1,
  };
  const member: Member = {
    key,
    firing: true,
    since: now,
    change: 'new',
    recoveredAt: null,
    flaps: 0,
    announced: false,
  };
  const opening = message(incident, [member], 'opened');
  return { incident, members: told([member], now, timing), message: opening };
}

/**
 * A member fires (a new one, or one that had recovered): `known` is its row, if it has one. A member that
 * recovered within one `group_interval` flaps: counted, and it sends nothing by itself.
 */
export function fired(
  incident: Incident,
  known: Member | undefined,
  key: string,
  now: number,
  timing: Timing,
): Change {
  if (known?.firing === true) return { incident, member: known };
  const flapping =
    known !== undefined && known.recoveredAt !== null && now - known.recoveredAt < timing.intervalMs
      ? known
      : undefined;
  const member: Member =
    flapping === undefined
      ? { key, firing: true, since: now, change: 'new', recoveredAt: null, flaps: 0, announced: false }
      : {
          ...flapping,
          firing: true,
          since: now,
          // Its untold recovery is undone; one never listed firing is still news.
          change: flapping.announced ? null : 'new',
          flaps: flapping.flaps + 1,
        };
  const next: Incident = {
    ...incident,
    lastChangeAt: now,
    flaps: incident.flaps + (flapping === undefined ? 0 : 1),
    firing: incident.firing + 1,
  };
  // A flap alone sends nothing: the flusher looks when it was to (a resolve due finds one firing again).
  next.dueAt =
    member.change === null ? (incident.dueAt ?? repeatAt(next, timing)) : nextUpdateAt(next, timing, now);
  return { incident: next, member };
}

/** A member returns to its good state. The last one to recover makes the resolve due `group_wait` later. */
export function recovered(
  incident: Incident,
  known: Member | undefined,
  now: number,
  timing: Timing,
): Change | undefined {
  if (known === undefined || !known.firing) return undefined;
  const member: Member = { ...known, firing: false, since: now, change: 'recovered', recoveredAt: now };
  const next: Incident = { ...incident, lastChangeAt: now, firing: incident.firing - 1 };
  // The resolve does not wait for group_interval; an update does.
  next.dueAt = next.firing === 0 ? now + timing.waitMs : nextUpdateAt(next, timing, now);
  return { incident: next, member };
}

function repeatAt(incident: Incident, timing: Timing): number | null {
  if (!timing.recovers) return incident.lastChangeAt + timing.intervalMs;
  return timing.repeatMs > 0 ? incident.lastMessageAt + timing.repeatMs : null;
}

/**
 * The incident is due: the message its state calls for, if any, and its next due time. Called at or after
 * `dueAt`; a call before it changes nothing.
 */
export function flush(incident: Incident, members: readonly Member[], now: number, timing: Timing): Step {
  if (incident.status === 'resolved' || incident.dueAt === null || now < incident.dueAt)
    return { incident, members: [...members], message: null };
  const changed = members.some((member) => member.change !== null);
  const speak = (reason: MessageReason, status: IncidentStatus): Step => {
    const next: Incident = {
      ...incident,
      status,
      sequence: incident.sequence + 1,
      lastMessageAt: now,
      resolvedAt: status === 'resolved' ? now : null,
    };
    const sent = message(next, members, reason);
    const after: Incident = { ...next, flaps: 0 };
    after.dueAt = status === 'resolved' ? null : repeatAt(after, timing);
    return {
      incident: after,
      members: status === 'resolved' ? [] : told(members, now, timing),
      message: sent,
    };
  };
  if (timing.recovers && incident.firing === 0) {
    // Only once the last recovery has waited group_wait: a later firing moved dueAt on.
    return speak('resolved', 'resolved');
  }
  if (!timing.recovers && !changed && now >= incident.lastChangeAt + timing.intervalMs) {
    // Nothing to recover from: one quiet group_interval ends the batch, with no message.
    return {
      incident: { ...incident, status: 'resolved', resolvedAt: now, dueAt: null },
      members: [],
      message: null,
    };
  }
  if (changed) return speak('updated', 'firing');
  const repeat = repeatAt(incident, timing);
  if (timing.recovers && repeat !== null && now >= repeat) return speak('repeat', 'firing');
  return { incident: { ...incident, dueAt: repeat }, members: [...members], message: null };
}
