import { Type, type Static } from 'typebox';
import { MAX_RESOURCES_PER_REPORT } from './limits.js';

const Key = Type.String({
  minLength: 1,
  maxLength: 128,
  description: "The agent's own key; unique per node.",
});
const Name = Type.String({ minLength: 1, maxLength: 128 });

export const ReportBody = Type.Object(
  {
    addresses: Type.Optional(
      Type.Array(
        Type.Object(
          {
            type: Type.Union([Type.Literal('InternalIP'), Type.Literal('ExternalIP')]),
            address: Type.String({ anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 2, description: 'At most one of each type.' },
      ),
    ),
    software_version: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    upgrade: Type.Optional(
      Type.Object(
        {
          status: Type.Union([
            Type.Literal('ENABLED'),
            Type.Literal('DISABLED'),
            Type.Literal('SUCCESSFUL'),
            Type.Literal('FAILED'),
          ]),
        },
        { additionalProperties: false },
      ),
    ),
    certificate: Type.Optional(
      Type.Object(
        {
          not_before: Type.String({ format: 'date-time' }),
          not_after: Type.String({ format: 'date-time' }),
        },
        { additionalProperties: false, description: 'not_before must come before not_after.' },
      ),
    ),
    tunnels: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Key,
            name: Name,
            state: Type.Union([Type.Literal('CONNECTED'), Type.Literal('TERMINATED')]),
            peer_node_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_RESOURCES_PER_REPORT },
      ),
    ),
    services: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Key,
            name: Name,
            status: Type.Union([
              Type.Literal('HEALTHY'),
              Type.Literal('UNHEALTHY'),
              Type.Literal('TERMINATED'),
            ]),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_RESOURCES_PER_REPORT },
      ),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Every field is optional; an empty body (or none) is a heartbeat. Tunnels and services not listed keep ' +
      'their state.',
  },
);

export type AgentReport = Static<typeof ReportBody>;

export const ReportAnswer = Type.Object({
  node_state: Type.Literal('ALIVE'),
  report_interval_s: Type.Integer({ description: 'Seconds until the next report is expected.' }),
});
