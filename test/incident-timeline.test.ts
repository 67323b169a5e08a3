import { describe, expect, it } from 'vitest';
import {
  fired,
  flush,
  open,
  recovered,
  type Change,
  type Incident,
  type Member,
  type Message,
  type Step,
  type Timing,
} from '../src/features/incidents/timeline.js';

// The rules of "when messages go out" (docs/decisions/0008-incidents.md), on the pure timeline: times are
// given, nothing sleeps.
const S = 1_000;
const T0 = Date.UTC(2026, 10, 28, 9, 0, 0);
const TIMING: Timing = { waitMs: 10 * S, intervalMs: 300 * S, repeatMs: 14_400 * S, recovers: true };

/** An incident driven through its changes, keeping every message made. */
class Driven {
  incident: Incident;
  members: Member[];
  readonly messages: Message[] = [];

  constructor(
    first: string,
    at: number,
    readonly timing: Timing = TIMING,
  ) {
    const step = open(first, at, timing);
    this.incident = step.incident;
    this.members = step.members;
    this.take(step);
  }

  private take(step: Step): void {
    this.incident = step.incident;
    this.members = step.members;
    if (step.message !== null) this.messages.push(step.message);
  }

  private change(change: Change | undefined): void {
    if (change === undefined) return;
    this.incident = change.incident;
    this.members = [...this.members.filter((member) => member.key !== change.member.key), change.member];
  }

  private known(key: string): Member | undefined {
    return this.members.find((member) => member.key === key);
  }

  fire(key: string, at: number): this {
    this.change(fired(this.incident, this.known(key), key, at, this.timing));
    return this;
  }

  recover(key: string, at: number): this {
    this.change(recovered(this.incident, this.known(key), at, this.timing));
    return this;
  }

  /** Runs the flusher at every due time up to `until`, as the claim of due incidents would. */
  runUntil(until: number): this {
    while (this.incident.dueAt !== null && this.incident.dueAt <= until) {
      this.take(flush(this.incident, this.members, this.incident.dueAt, this.timing));
    }
    return this;
  }

  last(): Message {
    return this.messages.at(-1)!;
  }
}

const keys = (message: Message) =>
  message.members.map((member) => `${member.key}:${member.change ?? 'firing'}`);

describe('the first word and the gathering after it', () => {
  it('sends the first member at once, then the 199 that followed within group_wait in one update at its end', () => {
    const storm = new Driven('node-000', T0);
    expect(storm.messages).toHaveLength(1);
    expect(storm.last()).toMatchObject({ sequence: 1, reason: 'opened', status: 'firing' });
    expect(keys(storm.last())).toEqual(['node-000:new']);

    for (let i = 1; i < 200; i += 1) storm.fire(`node-${String(i).padStart(3, '0')}`, T0 + (i % 9) * S);
    storm.runUntil(T0 + 9 * S);
    expect(storm.messages).toHaveLength(1);
    storm.runUntil(T0 + 10 * S);
    expect(storm.messages).toHaveLength(2);
    expect(storm.last()).toMatchObject({
      sequence: 2,
      reason: 'updated',
      counts: { firing: 200, new: 199, recovered: 0, flaps: 0 },
    });
    // New ones first, then the one already told.
    expect(keys(storm.last()).at(-1)).toBe('node-000:firing');
    // Nothing more until the repeat.
    storm.runUntil(T0 + 4 * 3_600 * S - 1);
    expect(storm.messages).toHaveLength(2);
  });

  it('sends nothing at the end of group_wait when no one joined', () => {
    const quiet = new Driven('node-a', T0).runUntil(T0 + 60 * S);
    expect(quiet.messages).toHaveLength(1);
  });

  it('sends at most one update per group_interval, counted from the last message', () => {
    const incident = new Driven('a', T0).fire('b', T0 + 5 * S).runUntil(T0 + 10 * S);
    expect(incident.messages).toHaveLength(2);
    incident.fire('c', T0 + 20 * S).fire('d', T0 + 200 * S);
    incident.runUntil(T0 + 309 * S);
    expect(incident.messages).toHaveLength(2);
    incident.runUntil(T0 + 310 * S);
    expect(incident.messages).toHaveLength(3);
    expect(keys(incident.last())).toEqual(['c:new', 'd:new', 'a:firing', 'b:firing']);
  });
});

describe('recovery', () => {
  it('lists a recovered member in one update, then drops it; the last recovery resolves group_wait later', () => {
    const incident = new Driven('a', T0)
      .fire('b', T0 + 1 * S)
      .fire('c', T0 + 2 * S)
      .runUntil(T0 + 10 * S);
    incident.recover('a', T0 + 60 * S).runUntil(T0 + 310 * S);
    expect(incident.last()).toMatchObject({ sequence: 3, reason: 'updated' });
    expect(keys(incident.last())).toEqual(['a:recovered', 'b:firing', 'c:firing']);

    incident.recover('b', T0 + 400 * S).recover('c', T0 + 401 * S);
    // Not group_interval after the last message (T0 + 610 s): group_wait after the last recovery.
    incident.runUntil(T0 + 410 * S);
    expect(incident.messages).toHaveLength(3);
    incident.runUntil(T0 + 411 * S);
    expect(incident.last()).toMatchObject({ sequence: 4, reason: 'resolved', status: 'resolved' });
    expect(keys(incident.last())).toEqual(['b:recovered', 'c:recovered']);
    expect(incident.incident).toMatchObject({ status: 'resolved', resolvedAt: T0 + 411 * S, dueAt: null });
  });

  it('resolves a one-member incident group_wait after its recovery, without waiting for group_interval', () => {
    const incident = new Driven('a', T0).recover('a', T0 + 2 * S).runUntil(T0 + 12 * S);
    expect(incident.messages.map((message) => message.reason)).toEqual(['opened', 'resolved']);
  });

  it('sends no resolve when a member fires again before it was due, and counts the flap in the next message', () => {
    const incident = new Driven('a', T0).recover('a', T0 + 2 * S).fire('a', T0 + 5 * S);
    incident.runUntil(T0 + 3_600 * S);
    expect(incident.messages.map((message) => message.reason)).toEqual(['opened']);
    expect(incident.incident.status).toBe('firing');
    incident.fire('b', T0 + 3_601 * S).runUntil(T0 + 3_601 * S);
    expect(incident.last()).toMatchObject({ reason: 'updated', counts: { flaps: 1, new: 1, firing: 2 } });
  });
});

describe('flaps', () => {
  it('counts a member that recovers and fires within group_interval as a flap, not new, even after its recovery was told', () => {
    const incident = new Driven('a', T0).fire('b', T0 + 1 * S).runUntil(T0 + 10 * S);
    incident.recover('b', T0 + 20 * S).runUntil(T0 + 310 * S);
    expect(keys(incident.last())).toEqual(['b:recovered', 'a:firing']);
    incident.fire('b', T0 + 315 * S);
    // A flap alone sends nothing.
    incident.runUntil(T0 + 1_000 * S);
    expect(incident.messages).toHaveLength(3);
    incident.fire('c', T0 + 1_001 * S).runUntil(T0 + 1_001 * S);
    expect(incident.last().counts).toEqual({ firing: 3, new: 1, recovered: 0, flaps: 1 });
    expect(keys(incident.last())).toEqual(['c:new', 'a:firing', 'b:firing']);
  });

  it('treats a member that returns after a whole group_interval as new', () => {
    const incident = new Driven('a', T0).fire('b', T0 + 1 * S).runUntil(T0 + 10 * S);
    incident.recover('b', T0 + 20 * S).runUntil(T0 + 310 * S);
    incident.fire('b', T0 + 20 * S + 300 * S).runUntil(T0 + 700 * S);
    expect(keys(incident.last())).toEqual(['b:new', 'a:firing']);
  });

  it('still announces a member that joined, recovered and came back before any message listed it', () => {
    const incident = new Driven('a', T0)
      .fire('b', T0 + 1 * S)
      .recover('b', T0 + 2 * S)
      .fire('b', T0 + 3 * S);
    incident.runUntil(T0 + 10 * S);
    expect(keys(incident.last())).toEqual(['b:new', 'a:firing']);
    expect(incident.last().counts.flaps).toBe(1);
  });
});

describe('repeats', () => {
  it('sends a firing incident with nothing new again after repeat_interval', () => {
    const incident = new Driven('a', T0).runUntil(T0 + 4 * 3_600 * S);
    expect(incident.messages.map((message) => message.reason)).toEqual(['opened', 'repeat']);
    expect(incident.last().sequence).toBe(2);
  });

  it('never repeats with repeat_interval 0', () => {
    const incident = new Driven('a', T0, { ...TIMING, repeatMs: 0 }).runUntil(T0 + 7 * 24 * 3_600 * S);
    expect(incident.messages).toHaveLength(1);
    expect(incident.incident.dueAt).toBeNull();
  });
});

describe('types without a good state', () => {
  it('batches the events of one group_interval and resolves after a quiet one, with no resolve message', () => {
    const batch = new Driven('event-1', T0, { ...TIMING, recovers: false });
    batch.fire('event-2', T0 + 3 * S).runUntil(T0 + 10 * S);
    expect(batch.messages.map((message) => message.reason)).toEqual(['opened', 'updated']);
    batch.runUntil(T0 + 400 * S);
    expect(batch.messages).toHaveLength(2);
    expect(batch.incident).toMatchObject({ status: 'resolved', dueAt: null });
  });
});

describe('a flush', () => {
  it('changes nothing before the incident is due', () => {
    const incident = new Driven('a', T0).fire('b', T0 + 1 * S);
    const early = flush(incident.incident, incident.members, T0 + 5 * S, TIMING);
    expect(early).toEqual({ incident: incident.incident, members: incident.members, message: null });
  });
});
