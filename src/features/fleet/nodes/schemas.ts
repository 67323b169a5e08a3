import { BulkIds } from '../../../http/bulk.js';
import { Type } from 'typebox';
import { forceQuery } from '../../../http/schemas.js';

const nodeState = (options: { description?: string } = {}) =>
  Type.Union([Type.Literal('NEW'), Type.Literal('ALIVE'), Type.Literal('UNREACHABLE')], options);
export const MAX_HEADLESS_MINUTES = 525_600; // a year
export const DEFAULT_HEADLESS_MINUTES = 1_440; // a day

const OrgRef = Type.Object({ id: Type.String(), name: Type.String() });
const Labels = Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.String({ maxLength: 256 }), {
  maxProperties: 32,
  description: 'At most 32 labels; keys 1–128 characters, values up to 256.',
});

const fields = {
  name: Type.String({ minLength: 1, maxLength: 128 }),
  metadata: Type.Object({ labels: Type.Optional(Labels) }, { additionalProperties: false }),
  max_headless_time: Type.Integer({
    minimum: 0,
    maximum: MAX_HEADLESS_MINUTES,
    description: `Minutes the node may stay unreachable before its headless time expires (0–${MAX_HEADLESS_MINUTES}; default ${DEFAULT_HEADLESS_MINUTES}).`,
  }),
};

const OrgId = Type.String({
  minLength: 1,
  maxLength: 64,
  description: "The node's organization: the caller's or one below it (else 404). Defaults to the caller's.",
});

export const CreateNodeBody = Type.Object(
  {
    name: fields.name,
    hardware_serial_number: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: 'Unique across the fleet (else 409).' }),
    ),
    create_under: Type.Optional(OrgId),
    max_headless_time: Type.Optional(fields.max_headless_time),
    metadata: Type.Optional(fields.metadata),
    profile_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Sent by the published client; edgewatch models no profiles: kept as given and answered in metadata ("" is none).',
      }),
    ),
    stat_mode: Type.Optional(
      Type.String({
        maxLength: 32,
        description:
          'Sent by the published client (FAST by default); kept as given and answered in metadata ("" is none).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const EditNodeBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    max_headless_time: Type.Optional(fields.max_headless_time),
    metadata: Type.Optional(fields.metadata),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'Changes the fields given (metadata.labels replaces all labels); at least one.',
  },
);

const Address = Type.Object({
  type: Type.Union([Type.Literal('InternalIP'), Type.Literal('ExternalIP')]),
  address: Type.String(),
});

export const Node = Type.Object({
  id: Type.String(),
  name: Type.String(),
  hardware_serial_number: Type.Union([Type.String(), Type.Null()]),
  node_state: nodeState({
    description:
      'NEW until the first report, then ALIVE; UNREACHABLE after NODE_HEARTBEAT_TIMEOUT_S of silence.',
  }),
  state_since: Type.String({ description: 'ISO 8601, UTC: when node_state last changed.' }),
  last_seen_at: Type.Union([Type.String(), Type.Null()], {
    description: 'The last report; null before the first.',
  }),
  organization: OrgRef,
  metadata: Type.Object({
    labels: Type.Record(Type.String(), Type.String()),
    profile_id: Type.Optional(
      Type.String({ description: 'As the published client gave it at registration.' }),
    ),
    stat_mode: Type.Optional(
      Type.String({ description: 'As the published client gave it at registration.' }),
    ),
  }),
  max_headless_time: Type.Integer({ description: 'Minutes.' }),
  headless_expires_at: Type.Union([Type.String(), Type.Null()], {
    description: 'While the node is UNREACHABLE: when its headless time runs out; null otherwise.',
  }),
  status: Type.Object({
    node: Type.Object({
      addresses: Type.Array(Address),
      info: Type.Object({
        version: Type.Object({ software_version: Type.Union([Type.String(), Type.Null()]) }),
      }),
    }),
  }),
  certificate: Type.Union([
    Type.Object({ not_before: Type.String(), not_after: Type.String() }),
    Type.Null(),
  ]),
  upgrade: Type.Union([Type.Object({ status: Type.String() }), Type.Null()]),
  tunnels: Type.Record(Type.String(), Type.Integer(), { description: 'How many tunnels are in each state.' }),
  services: Type.Record(Type.String(), Type.Integer(), {
    description: 'How many services have each status.',
  }),
  resource_states: Type.Object(
    {
      stale: Type.Boolean({ description: 'true while the node is UNREACHABLE.' }),
      as_of: Type.Union([Type.String(), Type.Null()], {
        description:
          "While stale, the node's last report (ISO 8601, UTC), which the counts describe; else null.",
      }),
    },
    {
      description:
        "Whether the tunnels' and services' counts are current, or only the last known ones: while the node is " +
        'UNREACHABLE they are what it last reported, and their states are unknown now.',
    },
  ),
  created_at: Type.String({ description: 'ISO 8601, UTC.' }),
});

export const NodeWithToken = Type.Object({
  ...Node.properties,
  token: Type.String({
    description:
      "The node's credential for X-NODE-TOKEN. Shown only in this answer (and on a new token); store it.",
  }),
});

/** The orders of the node list; `-` reverses one. */
export const NODE_SORTS = [
  'problems',
  'name',
  '-name',
  'state',
  '-state',
  'last_seen',
  '-last_seen',
  'organization',
  '-organization',
  'version',
  '-version',
  'tunnels',
  '-tunnels',
  'services',
  '-services',
] as const;
export type NodeSort = (typeof NODE_SORTS)[number];

export const NodeListFilters = {
  org_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: "Defaults to the caller's organization." }),
  ),
  include_child: Type.Optional(
    Type.Boolean({ default: true, description: 'Also the organizations below org_id (default true).' }),
  ),
  node_state: Type.Optional(nodeState()),
  search: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'Part of the name or serial number, any case.',
    }),
  ),
  label: Type.Optional(
    Type.String({ pattern: '^[^:]+:.*$', maxLength: 400, description: 'key:value; nodes with that label.' }),
  ),
  sort: Type.Optional(
    Type.Union(
      NODE_SORTS.map((value) => Type.Literal(value)),
      {
        description:
          'The order; `-` before a name reverses the whole order. name: natural order (node-2 before ' +
          'node-10, any case). state: ALIVE, NEW, UNREACHABLE, then by name. last_seen: the longest silent ' +
          "first, never seen before any. organization: by the organization's name, then by name. version: " +
          'by software version as text, never reported first, then by name. tunnels, services: by how many ' +
          'are away from CONNECTED or HEALTHY (the last known count while the node is UNREACHABLE), fewest ' +
          'first, then by name; -tunnels puts the most first. problems: ' +
          'UNREACHABLE, then NEW, then ALIVE, the longest silent first within each (never seen, then the ' +
          "oldest report); the console's default. Every order ends on id. Without sort: by name as stored, " +
          'then id.',
      },
    ),
  ),
};

export const DeleteNodeQuery = forceQuery(
  'true removes the alerts scoped to the node, its tunnels or its services too, in one transaction.',
);

export const DeleteNodesBody = Type.Object(
  {
    ids: BulkIds('The nodes to remove.'),
    force: Type.Optional(
      Type.Boolean({
        description:
          'true removes the alerts scoped to each node, its tunnels or its services too, with that node.',
      }),
    ),
  },
  { additionalProperties: false },
);
