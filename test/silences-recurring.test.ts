import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBadInputError } from './support/error-shape.js';
import { nodesIn, outage, report, startEngineApp, type EngineApp } from './support/incident-engine.js';

// Recurring maintenance windows on the real service and database (both), on a clock the test moves
// forward through next year: each occurrence holds back as a one-off window does and tells at its end,
// at the same local time in Paris through both daylight-saving changes, until `until`.
let engine: EngineApp;
let root: string;

const M = 60_000;
const H = 3_600_000;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const YEAR = new Date().getUTCFullYear() + 1;

/** 00:00 UTC of the last Sunday of a month (1–12): when Paris changes its clocks, at 01:00 UTC. */
function lastSunday(month: number): number {
  const last = new Date(Date.UTC(YEAR, month, 0));
  return Date.UTC(YEAR, month - 1, last.getUTCDate() - last.getUTCDay());
}
const SPRING = lastSunday(3);
const FALL = lastSunday(10);

const daily = (start: string, duration_minutes: number) => ({
  frequency: 'daily',
  start,
  duration_minutes,
  timezone: 'Europe/Paris',
});

beforeAll(async () => {
  engine = await startEngineApp();
  root = (await engine.t.request('GET', '/api/v1/user/me')).body.org_id as string;
});
afterAll(async () => {
  await engine.t.close();
});

async function org(name: string): Promise<string> {
  const res = await engine.t.request('POST', '/api/v1/org', { body: { name } });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

async function alert(orgId: string, alertMe: string): Promise<void> {
  const res = await engine.t.request('POST', '/api/v1/mysubscriptions', {
    body: {
      name: `Nodes of ${orgId}`,
      type: 'NODE_STATE_CHANGE',
      settings: { org_id: orgId, alert_me: alertMe, group_by: 'none' },
    },
  });
  expect(res.status, res.text).toBe(201);
}

async function openWindow(body: Record<string, unknown>) {
  const res = await engine.t.request('POST', '/api/v1/silence', { body: { name: 'Recurring', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const readWindow = async (id: string) => (await engine.t.request('GET', `/api/v1/silence/${id}`)).body;

/** Newest first. */
const notificationsOf = async (nodeId: string) =>
  (await engine.t.request('GET', `/api/v2/notification?node_id=${nodeId}`)).body.results as any[];

/** The window's end job, as it waits: when it is due, and since when it tells what was held back. */
async function endJob(silenceId: string) {
  const row = await engine.t.ctx.db
    .selectFrom('jobs')
    .select(['run_at', 'payload'])
    .where('kind', '=', 'silences.end')
    .where('key', '=', silenceId)
    .where('state', '=', 'queued')
    .executeTakeFirst();
  return row === undefined ? undefined : { run_at: Number(row.run_at), ...JSON.parse(row.payload) };
}

const countJobs = async () =>
  Number(
    (
      await engine.t.ctx.db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('kind', '=', 'silences.end')
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('a recurring window’s request', () => {
  it('is refused, naming the field, when anything in it is wrong; nothing is stored', async () => {
    engine.at.now = SPRING - 20 * DAY + 10 * H; // 11:00 in Paris
    const before = (await engine.t.request('GET', '/api/v2/silence')).body.total_count as number;
    const jobsBefore = await countJobs();
    const recurrence = daily('09:00', 60);
    const base = { name: 'Bad', org_id: root, recurrence };
    const oneOff = {
      name: 'Bad',
      org_id: root,
      starts_at: iso(engine.at.now),
      ends_at: iso(engine.at.now + H),
    };
    const cases: [string, Record<string, unknown>, string][] = [
      [
        'an unknown time zone',
        { ...base, recurrence: { ...recurrence, timezone: 'Mars/Olympus_Mons' } },
        'recurrence.timezone',
      ],
      [
        'no time zone',
        { ...base, recurrence: { ...recurrence, timezone: undefined } },
        'recurrence.timezone',
      ],
      [
        'a start without its leading zero',
        { ...base, recurrence: { ...recurrence, start: '9:00' } },
        'recurrence.start',
      ],
      [
        'a start past midnight',
        { ...base, recurrence: { ...recurrence, start: '24:00' } },
        'recurrence.start',
      ],
      [
        'weekly without days',
        { ...base, recurrence: { ...recurrence, frequency: 'weekly' } },
        'recurrence.days',
      ],
      ['daily with days', { ...base, recurrence: { ...recurrence, days: ['MO'] } }, 'recurrence.days'],
      [
        'a day twice',
        { ...base, recurrence: { ...recurrence, frequency: 'weekly', days: ['MO', 'MO'] } },
        'recurrence.days',
      ],
      [
        'no day at all',
        { ...base, recurrence: { ...recurrence, frequency: 'weekly', days: [] } },
        'recurrence.days',
      ],
      [
        'an unknown day',
        { ...base, recurrence: { ...recurrence, frequency: 'weekly', days: ['XX'] } },
        'recurrence.days.0',
      ],
      [
        'an unknown frequency',
        { ...base, recurrence: { ...recurrence, frequency: 'monthly' } },
        'recurrence.frequency',
      ],
      [
        'no duration',
        { ...base, recurrence: { ...recurrence, duration_minutes: 0 } },
        'recurrence.duration_minutes',
      ],
      [
        'more than a week',
        { ...base, recurrence: { ...recurrence, duration_minutes: 10_081 } },
        'recurrence.duration_minutes',
      ],
      [
        'a day every day',
        { ...base, recurrence: { ...recurrence, duration_minutes: 1440 } },
        'recurrence.duration_minutes',
      ],
      [
        'longer than between two days',
        {
          ...base,
          recurrence: { ...recurrence, frequency: 'weekly', days: ['MO', 'TU'], duration_minutes: 1500 },
        },
        'recurrence.duration_minutes',
      ],
      ['an unknown field', { ...base, recurrence: { ...recurrence, interval: 2 } }, 'recurrence.interval'],
      ['starts_at as well', { ...base, starts_at: iso(engine.at.now) }, 'starts_at'],
      ['ends_at as well', { ...base, ends_at: iso(engine.at.now + H) }, 'ends_at'],
      ['until on a one-off window', { ...oneOff, until: iso(engine.at.now + DAY) }, 'until'],
      ['until past', { ...base, until: iso(engine.at.now - M) }, 'until'],
      ['until no time', { ...base, until: 'soon' }, 'until'],
      ['until before the first occurrence', { ...base, until: iso(engine.at.now + H) }, 'until'],
      ['neither times nor recurrence', { name: 'Bad', org_id: root }, 'starts_at'],
    ];
    for (const [name, body, field] of cases) {
      const res = await engine.t.request('POST', '/api/v1/silence', { body });
      expect(res.status, `${name}: ${res.text}`).toBe(400);
      expectBadInputError(res, { name, status: 400, errorCode: 'BAD_REQUEST', field });
    }
    expect((await engine.t.request('GET', '/api/v2/silence')).body.total_count).toBe(before);
    expect(await countJobs()).toBe(jobsBefore);
  });
});

describe('a recurring window at work', () => {
  // Two weeks before summer time: Paris is UTC+1.
  const TUESDAY = SPRING - 12 * DAY;

  it('holds back during the occurrence open now, not for the next day’s; tells at its end; shows the next', async () => {
    engine.at.now = TUESDAY + 10 * H; // 11:00 in Paris
    const site = await org('Nightly site');
    await alert(site, 'UNREACHABLE');
    const [inside, outside] = await nodesIn(engine, site, 'recurring-a', 2);
    const open = await openWindow({ org_id: site, node_id: inside!.id, recurrence: daily('10:30', 60) });
    expect(open).toMatchObject({
      state: 'active',
      starts_at: iso(TUESDAY + 9.5 * H),
      ends_at: null,
      until: null,
      recurrence: { frequency: 'daily', start: '10:30', duration_minutes: 60, timezone: 'Europe/Paris' },
      next_occurrence: { starts_at: iso(TUESDAY + 9.5 * H), ends_at: iso(TUESDAY + 10.5 * H) },
    });
    expect(open.recurrence).not.toHaveProperty('days');
    const tomorrow = await openWindow({ org_id: site, node_id: outside!.id, recurrence: daily('08:00', 60) });
    expect(tomorrow).toMatchObject({
      state: 'upcoming',
      starts_at: iso(TUESDAY + DAY + 7 * H),
      next_occurrence: { starts_at: iso(TUESDAY + DAY + 7 * H), ends_at: iso(TUESDAY + DAY + 8 * H) },
    });

    await outage(engine);
    const [held] = await notificationsOf(inside!.id);
    expect(held).toMatchObject({ condition: 'UNREACHABLE', status: 'suppressed', reason: 'maintenance' });
    expect(held.silence_id).toBe(open.id);
    const [told] = await notificationsOf(outside!.id);
    expect(told).toMatchObject({ condition: 'UNREACHABLE', reason: null, silence_id: null });
    expect(told.status).not.toBe('suppressed');

    const listed = (await engine.t.request('GET', '/api/v2/silence')).body.results as any[];
    expect(listed.find((window) => window.id === open.id).next_occurrence).toEqual(open.next_occurrence);
    expect(listed.find((window) => window.id === tomorrow.id).next_occurrence).toEqual(
      tomorrow.next_occurrence,
    );

    // Its end: the node is still down, so it is told; the job waits for tomorrow's end.
    engine.at.now = TUESDAY + 10.5 * H;
    await engine.flushDue();
    const [after] = await notificationsOf(inside!.id);
    expect(after).toMatchObject({ id: held.id, reason: null, silence_id: open.id });
    expect(after.status).not.toBe('suppressed');
    expect(await endJob(open.id)).toEqual({
      run_at: TUESDAY + DAY + 10.5 * H,
      silenceId: open.id,
      since: TUESDAY + 10.5 * H,
    });
    expect(await readWindow(open.id)).toMatchObject({
      state: 'active',
      next_occurrence: { starts_at: iso(TUESDAY + DAY + 9.5 * H), ends_at: iso(TUESDAY + DAY + 10.5 * H) },
    });
  });

  it('weighs each occurrence on its own: what one left suppressed is not weighed again', async () => {
    engine.at.now = TUESDAY + 10.75 * H;
    const site = await org('Noon site');
    await alert(site, 'ALIVE,UNREACHABLE');
    const [node] = await nodesIn(engine, site, 'recurring-b', 1);
    const window = await openWindow({ org_id: site, recurrence: daily('12:00', 30) }); // 11:00–11:30 UTC
    const statuses = async () =>
      (await notificationsOf(node!.id)).map((n) => [
        n.condition,
        n.status === 'suppressed' ? n.silence_id : 'told',
      ]);

    // Down and back inside Tuesday's occurrence: nothing to tell at its end.
    engine.at.now = TUESDAY + 11 * H + M;
    await outage(engine);
    engine.at.now += M;
    await report(engine, node!.token);
    engine.at.now = TUESDAY + 11.5 * H;
    await engine.flushDue();
    // Down between occurrences: told at once.
    engine.at.now = TUESDAY + 12 * H;
    await outage(engine);
    // Back inside Wednesday's occurrence: held, then told at its end, though Tuesday's began and ended ALIVE.
    engine.at.now = TUESDAY + DAY + 11 * H + M;
    await report(engine, node!.token);
    expect(await statuses()).toEqual([
      ['ALIVE', window.id],
      ['UNREACHABLE', 'told'],
      ['ALIVE', window.id],
      ['UNREACHABLE', window.id],
      ['ALIVE', 'told'],
    ]);
    engine.at.now = TUESDAY + DAY + 11.5 * H;
    await engine.flushDue();
    expect(await statuses()).toEqual([
      ['ALIVE', 'told'],
      ['UNREACHABLE', 'told'],
      ['ALIVE', window.id],
      ['UNREACHABLE', window.id],
      ['ALIVE', 'told'],
    ]);
  });
});

describe('daylight-saving time', () => {
  /** Walks the week from Monday: each day's next occurrences as the API shows them, and each end job's move. */
  async function walkWeek(
    sunday: number,
    expected: (day: number) => [nine: number, early: number],
    extra?: (day: number) => Promise<void>,
  ) {
    const monday = sunday - 6 * DAY;
    engine.at.now = monday;
    const site = await org(`Week of ${iso(sunday).slice(0, 10)}`);
    const nine = await openWindow({ org_id: site, recurrence: daily('09:00', 60) });
    const early = await openWindow({ org_id: site, types: ['NODE_UPGRADE'], recurrence: daily('02:30', 60) });
    for (let day = 0; day < 8; day += 1) {
      engine.at.now = monday + day * DAY;
      const [nineStart, earlyStart] = expected(day);
      expect((await readWindow(nine.id)).next_occurrence, `day ${day}`).toEqual({
        starts_at: iso(nineStart),
        ends_at: iso(nineStart + H),
      });
      expect((await readWindow(early.id)).next_occurrence, `day ${day}`).toEqual({
        starts_at: iso(earlyStart),
        ends_at: iso(earlyStart + H),
      });
      await extra?.(day);
      engine.at.now = monday + day * DAY + 12 * H;
      await engine.flushDue();
      const [nextNine, nextEarly] = expected(day + 1);
      expect((await endJob(nine.id))?.run_at, `day ${day}`).toBe(nextNine + H);
      expect((await endJob(early.id))?.run_at, `day ${day}`).toBe(nextEarly + H);
    }
    return { site, nine };
  }

  it('opens at 09:00 and 02:30 in Paris through the week summer time starts, and holds back at 09:10 local', async () => {
    const monday = SPRING - 6 * DAY;
    let node: { id: string; token: string } | undefined;
    // Standard time (UTC+1) to Saturday; summer time (UTC+2) from Sunday 03:00, so 02:30 that night is 03:30.
    const { nine } = await walkWeek(
      SPRING,
      (day) => {
        const midnight = monday + day * DAY;
        if (day < 6) return [midnight + 8 * H, midnight + 1.5 * H];
        return [midnight + 7 * H, midnight + (day === 6 ? 1.5 : 0.5) * H];
      },
      async (day) => {
        if (day === 0) {
          const site = await org('Spring site');
          await alert(site, 'UNREACHABLE');
          [node] = await nodesIn(engine, site, 'recurring-spring', 1);
          await openWindow({ org_id: site, recurrence: daily('09:00', 60) });
        }
        if (day !== 5 && day !== 6) return;
        // 09:10 on Sunday (summer time) is 07:10 UTC; on Saturday 07:10 UTC is 08:10, before it opens.
        engine.at.now = monday + day * DAY + 7 * H + 7.5 * M;
        await report(engine, node!.token);
        await outage(engine);
        const [latest] = await notificationsOf(node!.id);
        expect(latest.status === 'suppressed', `day ${day}`).toBe(day === 6);
      },
    );
    expect(nine.recurrence.timezone).toBe('Europe/Paris');
  });

  it('opens at 09:00 and 02:30 in Paris through the week summer time ends; 02:30 that night is the first', async () => {
    const monday = FALL - 6 * DAY;
    // Summer time (UTC+2) to Saturday; standard time (UTC+1) from Sunday 03:00, when 02:00–03:00 comes again.
    await walkWeek(FALL, (day) => {
      const midnight = monday + day * DAY;
      if (day < 6) return [midnight + 7 * H, midnight + 0.5 * H];
      return [midnight + 8 * H, midnight + (day === 6 ? 0.5 : 1.5) * H];
    });
  });
});

describe('until, and ending early', () => {
  // The Monday after summer time ended: Paris is UTC+1.
  const MONDAY = FALL + 8 * DAY;

  it('opens no occurrence after until: the window ends with the last one', async () => {
    engine.at.now = MONDAY + 6 * H;
    const site = await org('Until site');
    await alert(site, 'UNREACHABLE');
    const [node] = await nodesIn(engine, site, 'recurring-until', 1);
    const wednesday = MONDAY + 2 * DAY + 8 * H; // 09:00 in Paris
    const window = await openWindow({
      org_id: site,
      recurrence: {
        frequency: 'weekly',
        days: ['WE', 'MO'],
        start: '09:00',
        duration_minutes: 120,
        timezone: 'Europe/Paris',
      },
      until: iso(wednesday),
    });
    expect(window).toMatchObject({
      state: 'upcoming',
      recurrence: { frequency: 'weekly', days: ['MO', 'WE'] },
      starts_at: iso(MONDAY + 8 * H),
      ends_at: iso(wednesday + 2 * H),
      until: iso(wednesday),
      next_occurrence: { starts_at: iso(MONDAY + 8 * H), ends_at: iso(MONDAY + 10 * H) },
    });
    engine.at.now = MONDAY + 10 * H;
    await engine.flushDue();
    expect((await endJob(window.id))?.run_at).toBe(wednesday + 2 * H);
    engine.at.now = wednesday + 2 * H;
    await engine.flushDue();
    expect(await endJob(window.id)).toBeUndefined();
    expect(await readWindow(window.id)).toMatchObject({ state: 'ended', next_occurrence: null });

    // The next Monday at 09:30 in Paris: no occurrence, so a node that goes down is told.
    engine.at.now = MONDAY + 7 * DAY + 8.5 * H;
    await outage(engine);
    const [told] = await notificationsOf(node!.id);
    expect(told).toMatchObject({ condition: 'UNREACHABLE', silence_id: null });
    expect(told.status).not.toBe('suppressed');
  });

  it('ends now when ended during an occurrence, telling what it held; is removed when none has opened', async () => {
    const friday = MONDAY + 11 * DAY;
    engine.at.now = friday + 8 * H; // 09:00 in Paris
    const site = await org('Ended site');
    await alert(site, 'UNREACHABLE');
    const [node] = await nodesIn(engine, site, 'recurring-ended', 1);
    const window = await openWindow({ org_id: site, recurrence: daily('09:00', 120) });
    const later = await openWindow({ org_id: site, recurrence: daily('18:00', 60) });
    await outage(engine);
    const [held] = await notificationsOf(node!.id);
    expect(held.silence_id).toBe(window.id);

    const ended = await engine.t.request('DELETE', `/api/v1/silence/${window.id}`);
    expect(ended.body).toMatchObject({ state: 'ended', ends_at: iso(engine.at.now), next_occurrence: null });
    await engine.flushDue();
    const [told] = await notificationsOf(node!.id);
    expect(told).toMatchObject({ id: held.id, reason: null });
    expect(told.status).not.toBe('suppressed');
    expect(await endJob(window.id)).toBeUndefined();

    const cancelled = await engine.t.request('DELETE', `/api/v1/silence/${later.id}`);
    expect(cancelled.body).toMatchObject({ state: 'cancelled', next_occurrence: null });
    expect(await endJob(later.id)).toBeUndefined();
    expect((await engine.t.request('GET', `/api/v1/silence/${later.id}`)).status).toBe(404);
  });
});
