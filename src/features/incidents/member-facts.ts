import type { NotificationBody } from '../../receiver/index.js';
import type { MemberFacts } from './message-body.js';
import { goodStateOf } from './policy.js';

/** What a member is and where, from its latest notification's body (absent once retention removed it). */
export type MemberWhat = Pick<
  MemberFacts,
  'resource' | 'node' | 'organization' | 'condition' | 'previous_state' | 'current_state'
>;

/**
 * A member as a message or the API shows it. A recovery that no notification recorded (the alert does not
 * ask for the good state) is told as one: the good state now, the last one before.
 */
export function memberWhat(
  member: { key: string; firing: boolean; condition: string },
  type: string,
  body: Partial<NotificationBody> | undefined,
): MemberWhat {
  const what: MemberWhat = {
    resource: body?.resource ?? { kind: 'node', id: member.key, name: '' },
    node: body?.node ?? { id: '', name: '' },
    organization: body?.organization ?? { id: '', name: '' },
    condition: body?.condition ?? member.condition,
    previous_state: body?.previous_state ?? null,
    current_state: body?.current_state ?? '',
  };
  const good = goodStateOf(type);
  if (member.firing || good === undefined || what.current_state === good) return what;
  return { ...what, condition: good, previous_state: what.current_state, current_state: good };
}
