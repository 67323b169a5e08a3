import { BulkIds } from '../../http/bulk.js';
import { Type } from 'typebox';
import { NOTIFICATION_TYPES } from '../notifications/types.js';
import { WEEKDAYS } from './recurrence.js';

const Instant = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 40,
    description: `${description}: ISO 8601, or epoch milliseconds.`,
  });

const NotificationType = Type.Union(NOTIFICATION_TYPES.map((type) => Type.Literal(type)));

const Frequency = Type.Union([Type.Literal('daily'), Type.Literal('weekly')], {
  description: 'daily: every day; weekly: on the days listed in days.',
});
const Days = Type.Array(Type.Enum(WEEKDAYS), {
  minItems: 1,
  maxItems: WEEKDAYS.length,
  uniqueItems: true,
  description: 'The days a weekly window opens on (MO … SU, local to timezone); a daily window has none.',
});
const Start = Type.String({
  minLength: 1,
  maxLength: 5,
  description:
    'The local time of day each occurrence opens, HH:MM (00:00 to 23:59). A time the clocks skip when ' +
    'daylight-saving time starts is moved on by the gap (02:30 → 03:30); a time they show twice when it ' +
    'ends is the first of the two.',
});
const DurationMinutes = Type.Integer({
  minimum: 1,
  maximum: 10_080,
  description:
    'How long each occurrence stays open, in real minutes (1 to 10,080: 7 days), and shorter than the time ' +
    'from one occurrence to the next: under 1,440 for a daily window, under the shortest stretch between ' +
    'two of its days for a weekly one.',
});
const TimeZone = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'An IANA time-zone name (Europe/Paris); answered in its canonical spelling.',
});

const RECURRENCE =
  'The window recurs: it opens at start, local to timezone, every day or on each of days, for ' +
  'duration_minutes each time, from the occurrence open when it is created (or the next one) on. Not ' +
  'with starts_at and ends_at.';

export const RecurrenceBody = Type.Object(
  {
    frequency: Frequency,
    days: Type.Optional(Days),
    start: Start,
    duration_minutes: DurationMinutes,
    timezone: TimeZone,
  },
  { additionalProperties: false, description: RECURRENCE },
);

export const CreateSilenceBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    org_id: Type.String({
      minLength: 1,
      maxLength: 64,
      description: "The organization under maintenance: the caller's or one below it (else 404).",
    }),
    include_child: Type.Optional(
      Type.Union([Type.Boolean(), Type.Literal('true'), Type.Literal('false')], {
        description: 'Also every organization below org_id. Defaults to true.',
      }),
    ),
    node_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'Only this node and its tunnels and services: one you can see (else 404) inside the scope (else 400).',
      }),
    ),
    node_ids: Type.Optional(
      BulkIds(
        'A window for each of these nodes instead (not with node_id): the answer is 200 with one result ' +
          'per node, 201 with its window or the error that node alone would have answered.',
      ),
    ),
    types: Type.Optional(
      Type.Array(NotificationType, {
        minItems: 1,
        maxItems: NOTIFICATION_TYPES.length,
        uniqueItems: true,
        description: 'Only these notification types; omitted means all.',
      }),
    ),
    starts_at: Type.Optional(Instant('A one-off window: when the work starts; required without recurrence')),
    ends_at: Type.Optional(
      Instant(
        'A one-off window: when it ends, after starts_at and in the future; required without recurrence',
      ),
    ),
    recurrence: Type.Optional(RecurrenceBody),
    until: Type.Optional(
      Instant(
        'A recurring window only: no occurrence starts after it (one that started by then runs its full ' +
          'duration). In the future, and not before the first occurrence. Omitted: it recurs until ended',
      ),
    ),
    comment: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);

export const Silence = Type.Object({
  id: Type.String(),
  name: Type.String(),
  org_id: Type.String(),
  include_child: Type.Boolean(),
  node_id: Type.Union([Type.String(), Type.Null()]),
  types: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'null: every type.' }),
  starts_at: Type.String({
    description: 'ISO 8601 UTC. A recurring window: its first occurrence’s start.',
  }),
  ends_at: Type.Union([Type.String(), Type.Null()], {
    description:
      'ISO 8601 UTC; moved to the time it was ended early. A recurring window: its last occurrence’s end; ' +
      'null when it has no until.',
  }),
  comment: Type.Union([Type.String(), Type.Null()]),
  state: Type.Union(
    [Type.Literal('upcoming'), Type.Literal('active'), Type.Literal('ended'), Type.Literal('cancelled')],
    {
      description:
        'cancelled: removed before it started (the answer of a DELETE only). A recurring window is active ' +
        'from its first occurrence’s start to its last one’s end, between occurrences too: next_occurrence ' +
        'tells whether one is open now.',
    },
  ),
  created_by: Type.Object({ id: Type.String() }),
  created_at: Type.String({ description: 'ISO 8601 UTC.' }),
  recurrence: Type.Union(
    [
      Type.Object({
        frequency: Frequency,
        days: Type.Optional(Days),
        start: Start,
        duration_minutes: DurationMinutes,
        timezone: TimeZone,
      }),
      Type.Null(),
    ],
    { description: 'null: a one-off window.' },
  ),
  until: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601 UTC; null: none.' }),
  next_occurrence: Type.Union(
    [Type.Object({ starts_at: Type.String(), ends_at: Type.String() }), Type.Null()],
    {
      description:
        'The occurrence open now (starts_at ≤ now), else the next one to open, ISO 8601 UTC; null when ' +
        'none is left (ended, cancelled). A one-off window’s one occurrence is the window itself.',
    },
  ),
});

export const silenceFilters = {
  state: Type.Optional(Type.Union([Type.Literal('upcoming'), Type.Literal('active'), Type.Literal('ended')])),
};
