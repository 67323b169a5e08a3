import type { ServiceContext } from '../../../context.js';
import { notFound } from '../../../http/errors.js';
import { instant } from '../../../http/instants.js';
import type { Page, PageRequest } from '../../../http/lists.js';
import { isoUtc } from '../../../lib/clock.js';
import { isInSubtree } from '../../orgs/repo.js';
import { findNode } from '../nodes/repo.js';
import * as repo from './repo.js';

export interface EventListQuery {
  org_id?: string;
  include_child?: boolean;
  node_id?: string;
  type?: string;
  resource_kind?: string;
  start_date?: string;
  end_date?: string;
}

export async function listEvents(
  ctx: ServiceContext,
  query: EventListQuery,
  page: PageRequest,
): Promise<Page<EventJson>> {
  const orgId = query.org_id ?? ctx.actor.orgId;
  if (!(await isInSubtree(ctx.db, ctx.actor.orgId, orgId))) throw notFound('Organization');
  if (query.node_id !== undefined) {
    const node = await findNode(ctx.db, query.node_id);
    if (node === undefined || !(await isInSubtree(ctx.db, ctx.actor.orgId, node.org_id)))
      throw notFound('Node');
  }
  const from = instant('start_date', query.start_date);
  const to = instant('end_date', query.end_date);
  const found = await repo.listEvents(
    ctx.db,
    {
      orgId,
      includeChild: query.include_child ?? true,
      ...(query.node_id === undefined ? {} : { nodeId: query.node_id }),
      ...(query.type === undefined ? {} : { type: query.type }),
      ...(query.resource_kind === undefined ? {} : { resourceKind: query.resource_kind }),
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
    },
    page,
  );
  return { total_count: found.total_count, results: found.results.map(present) };
}

export type EventJson = ReturnType<typeof present>;

function present(event: repo.EventView) {
  return {
    id: event.id,
    type: event.type,
    condition: event.condition,
    organization: { id: event.org_id, name: event.org_name },
    node: { id: event.node_id, name: event.node_name },
    resource: { kind: event.resource_kind, id: event.resource_id, name: event.resource_name },
    previous_state: event.previous_state,
    current_state: event.current_state,
    sequence: event.sequence,
    occurred_at: isoUtc(event.occurred_at),
    detected_at: isoUtc(event.detected_at),
  };
}
