import { transaction } from '../../../db/transaction.js';
import { forEachId } from '../../../http/bulk.js';
import { releaseScopedAlerts, removalAnswer } from '../../alerts/scoped-removal.js';
import type { ServiceContext } from '../../../context.js';
import { isUniqueViolation } from '../../../db/connect.js';
import type { Executor } from '../../../db/types.js';
import { conflict, notFound } from '../../../http/errors.js';
import type { Page, PageRequest } from '../../../http/lists.js';
import { isoUtc, isoUtcOrNull } from '../../../lib/clock.js';
import { newId } from '../../../lib/ids.js';
import { randomToken, sha256Hex } from '../../../lib/tokens.js';
import { isInSubtree } from '../../orgs/repo.js';
import { naturalSortKey } from './name-sort.js';
import * as repo from './repo.js';
import { DEFAULT_HEADLESS_MINUTES, type NodeSort } from './schemas.js';
import { staleness } from '../resources/service.js';

const MINUTE_MS = 60_000;

export interface NewNode {
  name: string;
  hardware_serial_number?: string;
  create_under?: string;
  max_headless_time?: number;
  metadata?: { labels?: Record<string, string> };
  profile_id?: string;
  stat_mode?: string;
}

export interface NodeEdit {
  name?: string;
  max_headless_time?: number;
  metadata?: { labels?: Record<string, string> };
}

export interface NodeListQuery {
  org_id?: string;
  include_child?: boolean;
  node_state?: repo.NodeRow['node_state'];
  search?: string;
  label?: string;
  sort?: NodeSort;
}

/** A node credential: recognizable by its prefix, 32 random bytes, stored only as its SHA-256. */
function newNodeToken(): { token: string; hash: string } {
  const token = `ewn_${randomToken()}`;
  return { token, hash: sha256Hex(token) };
}

const serialTaken = () => conflict('A node with this hardware_serial_number is already registered.');

async function visibleOrg(ctx: ServiceContext, db: Executor, orgId: string): Promise<void> {
  if (!(await isInSubtree(db, ctx.actor.orgId, orgId))) throw notFound('Organization');
}

/** The node if the caller may see it (its organization is the caller's or below), else 404. */
export async function visibleNode(ctx: ServiceContext, db: Executor, id: string): Promise<repo.NodeView> {
  const node = await repo.findNode(db, id);
  if (node === undefined || !(await isInSubtree(db, ctx.actor.orgId, node.org_id))) throw notFound('Node');
  return node;
}

interface ClientSettings {
  profile_id?: string;
  stat_mode?: string;
}

/** The published client's profile_id and stat_mode, kept as given; an empty one is none. */
function clientSettings(input: ClientSettings): string | null {
  const given: ClientSettings = {
    ...(input.profile_id ? { profile_id: input.profile_id } : {}),
    ...(input.stat_mode ? { stat_mode: input.stat_mode } : {}),
  };
  return Object.keys(given).length === 0 ? null : JSON.stringify(given);
}

export async function registerNode(ctx: ServiceContext, input: NewNode) {
  const orgId = input.create_under ?? ctx.actor.orgId;
  const now = ctx.clock.now();
  const credential = newNodeToken();
  const labels = input.metadata?.labels ?? {};
  const row: repo.NodeRow = {
    id: newId(now),
    org_id: orgId,
    name: input.name,
    name_sort: naturalSortKey(input.name),
    hardware_serial_number: input.hardware_serial_number ?? null,
    report_digest: null,
    token_hash: credential.hash,
    labels: JSON.stringify(labels),
    max_headless_time: input.max_headless_time ?? DEFAULT_HEADLESS_MINUTES,
    node_state: 'NEW',
    state_since: now,
    last_seen_at: null,
    addresses: '[]',
    software_version: null,
    tunnels_down: 0,
    services_down: 0,
    upgrade_status: null,
    cert_not_before: null,
    cert_not_after: null,
    sequence: 0,
    client_settings: clientSettings(input),
    created_at: now,
  };
  try {
    const node = await transaction(ctx.db, async (trx) => {
      await visibleOrg(ctx, trx, orgId);
      const serial = row.hardware_serial_number;
      if (serial !== null && (await repo.serialTaken(trx, serial))) throw serialTaken();
      await repo.insertNode(trx, row, labels);
      return visibleNode(ctx, trx, row.id);
    });
    return { ...(await present(ctx, [node]))[0]!, token: credential.token };
  } catch (error) {
    throw isUniqueViolation(error) ? serialTaken() : error;
  }
}

export async function getNode(ctx: ServiceContext, id: string) {
  return (await present(ctx, [await visibleNode(ctx, ctx.db, id)]))[0]!;
}

export async function listNodes(
  ctx: ServiceContext,
  query: NodeListQuery,
  page: PageRequest,
): Promise<Page<NodeJson>> {
  const orgId = query.org_id ?? ctx.actor.orgId;
  await visibleOrg(ctx, ctx.db, orgId);
  const separator = query.label?.indexOf(':') ?? -1;
  const found = await repo.listNodes(
    ctx.db,
    {
      orgId,
      includeChild: query.include_child ?? true,
      ...(query.node_state === undefined ? {} : { nodeState: query.node_state }),
      ...(query.search === undefined ? {} : { search: query.search }),
      ...(query.label === undefined
        ? {}
        : { label: { key: query.label.slice(0, separator), value: query.label.slice(separator + 1) } }),
    },
    page,
    query.sort,
  );
  return { total_count: found.total_count, results: await present(ctx, found.results) };
}

export async function editNode(ctx: ServiceContext, id: string, edit: NodeEdit) {
  const node = await transaction(ctx.db, async (trx) => {
    await visibleNode(ctx, trx, id);
    await repo.updateNode(trx, id, {
      ...(edit.name === undefined ? {} : { name: edit.name, name_sort: naturalSortKey(edit.name) }),
      ...(edit.max_headless_time === undefined ? {} : { max_headless_time: edit.max_headless_time }),
      ...(edit.metadata?.labels === undefined ? {} : { labels: JSON.stringify(edit.metadata.labels) }),
    });
    if (edit.metadata?.labels !== undefined) await repo.replaceLabels(trx, id, edit.metadata.labels);
    return visibleNode(ctx, trx, id);
  });
  return (await present(ctx, [node]))[0]!;
}

/** Without force a node that alerts are scoped to stays; with force it goes with them, atomically. */
export async function deleteNode(ctx: ServiceContext, id: string, force: boolean) {
  const removed = await transaction(ctx.db, async (trx) => {
    // Locked first: of two removals at once, the second waits here and then finds it gone (404).
    await repo.lockNode(trx, id);
    await visibleNode(ctx, trx, id);
    const alertIds = await releaseScopedAlerts(trx, { node: id }, 'node', force);
    // Their tunnels lose this peer: their next report must be applied, not taken as a repeat.
    await repo.forgetReportedState(trx, await repo.peersOf(trx, id));
    await repo.deleteNode(trx, id);
    return alertIds;
  });
  return removalAnswer(id, 'Node', 'deleted', force, removed);
}

/** Each node removed as DELETE /api/v1/node/:id would, in a transaction of its own; refusals per id. */
export function deleteNodes(ctx: ServiceContext, ids: readonly string[], force: boolean) {
  return forEachId(ids, 200, (id) => deleteNode(ctx, id, force));
}

/** A new credential; the old one stops working when this commits. */
export async function renewNodeToken(ctx: ServiceContext, id: string) {
  const credential = newNodeToken();
  const node = await transaction(ctx.db, async (trx) => {
    await visibleNode(ctx, trx, id);
    await repo.updateNode(trx, id, { token_hash: credential.hash });
    return visibleNode(ctx, trx, id);
  });
  return { ...(await present(ctx, [node]))[0]!, token: credential.token };
}

async function present(ctx: ServiceContext, nodes: readonly repo.NodeView[]) {
  const counts = await repo.resourceCounts(
    ctx.db,
    nodes.map((node) => node.id),
  );
  return nodes.map((node) =>
    presentNode(node, counts.tunnels.get(node.id) ?? {}, counts.services.get(node.id) ?? {}),
  );
}

export type NodeJson = ReturnType<typeof presentNode>;

function presentNode(node: repo.NodeView, tunnels: Record<string, number>, services: Record<string, number>) {
  const unreachable = node.node_state === 'UNREACHABLE';
  return {
    id: node.id,
    name: node.name,
    hardware_serial_number: node.hardware_serial_number,
    node_state: node.node_state,
    state_since: isoUtc(node.state_since),
    last_seen_at: isoUtcOrNull(node.last_seen_at),
    organization: { id: node.org_id, name: node.org_name },
    metadata: {
      labels: JSON.parse(node.labels) as Record<string, string>,
      ...(node.client_settings === null ? {} : (JSON.parse(node.client_settings) as ClientSettings)),
    },
    max_headless_time: node.max_headless_time,
    headless_expires_at: unreachable ? isoUtc(node.state_since + node.max_headless_time * MINUTE_MS) : null,
    status: {
      node: {
        addresses: JSON.parse(node.addresses) as { type: 'InternalIP' | 'ExternalIP'; address: string }[],
        info: { version: { software_version: node.software_version } },
      },
    },
    certificate:
      node.cert_not_before === null || node.cert_not_after === null
        ? null
        : { not_before: isoUtc(node.cert_not_before), not_after: isoUtc(node.cert_not_after) },
    upgrade: node.upgrade_status === null ? null : { status: node.upgrade_status },
    tunnels: { CONNECTED: 0, TERMINATED: 0, ...tunnels },
    services: { HEALTHY: 0, UNHEALTHY: 0, TERMINATED: 0, ...services },
    resource_states: staleness(node.node_state, node.last_seen_at),
    created_at: isoUtc(node.created_at),
  };
}
