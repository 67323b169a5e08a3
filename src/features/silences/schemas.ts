import { BulkIds } from '../../http/bulk.js';
import { Type } from 'typebox';
import { NOTIFICATION_TYPES } from '../notifications/types.js';

const Instant = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 40,
    description: `${description}: ISO 8601, or epoch milliseconds.`,
  });

const NotificationType = Type.Union(NOTIFICATION_TYPES.map((type) => Type.Literal(type)));

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
    starts_at: Instant('When the work starts'),
    ends_at: Instant('When it ends: after starts_at and in the future'),
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
  starts_at: Type.String({ description: 'ISO 8601 UTC.' }),
  ends_at: Type.String({ description: 'ISO 8601 UTC; moved to the time it was ended early.' }),
  comment: Type.Union([Type.String(), Type.Null()]),
  state: Type.Union(
    [Type.Literal('upcoming'), Type.Literal('active'), Type.Literal('ended'), Type.Literal('cancelled')],
    {
      description: 'cancelled: removed before it started (the answer of a DELETE only).',
    },
  ),
  created_by: Type.Object({ id: Type.String() }),
  created_at: Type.String({ description: 'ISO 8601 UTC.' }),
});

export const silenceFilters = {
  state: Type.Optional(Type.Union([Type.Literal('upcoming'), Type.Literal('active'), Type.Literal('ended')])),
};
