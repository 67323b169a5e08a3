import type { AppContext } from '../../../context.js';
import { isoUtc } from '../../../lib/clock.js';
import { newId } from '../../../lib/ids.js';
import type { NodeRow } from '../nodes/repo.js';
import { lockNode, updateNode } from '../nodes/repo.js';
import { rememberMatchingVersion } from '../../notifications/matching-snapshot.js';
import type { StatesBehind } from '../../notifications/suppression.js';
import { recordEvents } from '../events/record.js';
import * as resources from '../resources-repo.js';
import {
  cancelHeadlessChecks,
  renewsWarnedCertificate,
  RENEWED,
  scheduleCertificateChecks,
} from '../expiry/jobs.js';
import { checkPeers, checkReport } from './checks.js';
import { addressChanges, planResources, type Address, type Change } from './diff.js';
import { reportDigests, repeatsLastReport, withReport } from './digest.js';
import type { HeartbeatBuffer } from './heartbeats.js';
import type { AgentReport } from './schemas.js';

/** What the report route knows of the node behind a token before it decides how to take the report. */
export interface ReportingNode {
  id: string;
  node_state: string;
  report_digest: string | null;
}

/**
 * Takes an agent's report. One that repeats the last applied report, from a node that is ALIVE, changes
 * nothing: its time is kept in the heartbeat buffer, which writes every node's last report in one
 * statement a second, and no transaction of its own is paid. Any other report is applied.
 */
export async function receiveReport(
  ctx: AppContext,
  heartbeats: HeartbeatBuffer,
  node: ReportingNode,
  report: AgentReport,
): Promise<{ node_state: 'ALIVE'; report_interval_s: number }> {
  checkReport(report);
  const digests = reportDigests(report);
  if (node.node_state === 'ALIVE' && repeatsLastReport(node.report_digest, digests)) {
    heartbeats.record(node.id, ctx.clock.now());
  } else {
    await applyReport(ctx, node.id, report, digests);
  }
  return { node_state: 'ALIVE', report_interval_s: ctx.config.nodeReportIntervalS };
}

const DOWN_COLUMN = { tunnels: 'tunnels_down', services: 'services_down' } as const;

/** How many of the node's tunnels or services are away from `good` once the plan is applied. */
function downAfter(
  good: string,
  stored: readonly resources.StoredWithSequence[],
  plan: ReturnType<typeof planResources>,
  added: readonly { id: string; state: string }[],
): number {
  const states = new Map<string, string>(stored.map((row) => [row.id, row.state]));
  for (const { stored: before, reported } of plan.changed) states.set(before.id, reported.state);
  for (const resource of added) states.set(resource.id, resource.state);
  return [...states.values()].filter((state) => state !== good).length;
}

/**
 * What is behind a tunnel's or service's change, as this report read it: the node is ALIVE (the report makes
 * it so), and a tunnel's peer is in the state read with the tunnel. Undefined when the report moved a tunnel
 * to a peer not read: its state is read when a notification needs it.
 */
function behind(
  table: resources.ResourceTable,
  peer: string | null,
  read?: { peer: string | null; state: string | null | undefined },
): StatesBehind | undefined {
  if (table === 'services') return { node: 'ALIVE', peer: undefined };
  if (peer === null) return { node: 'ALIVE', peer: null };
  return read?.peer === peer ? { node: 'ALIVE', peer: read.state ?? null } : undefined;
}

/**
 * Applies an agent's report: the node is ALIVE, and every change to its addresses, upgrade status, tunnels
 * and services is stored as an event in the same transaction as the new state
 * (docs/rules/alerts-and-fleet.md#events).
 */
export async function applyReport(
  ctx: AppContext,
  nodeId: string,
  report: AgentReport,
  digests = reportDigests(report),
): Promise<void> {
  await ctx.commits.run(async (trx) => {
    const node = await lockNode(trx, nodeId, {
      tunnels: (report.tunnels?.length ?? 0) > 0,
      services: (report.services?.length ?? 0) > 0,
    });
    if (node === undefined) return;
    rememberMatchingVersion(trx, node.matching_version);
    await checkPeers(trx, report);
    const now = ctx.clock.now();
    const nodeResource = { kind: 'node' as const, id: node.id, name: node.name };
    const changes: (Change & { sequence: number })[] = [];
    let nodeSequence = node.sequence;
    const nodeChange = (change: Change) => changes.push({ ...change, sequence: (nodeSequence += 1) });
    const update: Partial<NodeRow> = {
      last_seen_at: Math.max(now, node.last_seen_at ?? now),
      report_digest: withReport(node.report_digest, digests),
    };

    if (node.node_state !== 'ALIVE') {
      nodeChange({
        type: 'NODE_STATE_CHANGE',
        condition: 'ALIVE',
        resource: nodeResource,
        previous: node.node_state,
        current: 'ALIVE',
      });
      Object.assign(update, { node_state: 'ALIVE', state_since: now });
      if (node.node_state === 'UNREACHABLE') await cancelHeadlessChecks(ctx.jobs, trx, node.id);
    }
    if (report.addresses !== undefined) {
      for (const change of addressChanges(node, JSON.parse(node.addresses) as Address[], report.addresses))
        nodeChange(change);
      update.addresses = JSON.stringify(report.addresses);
    }
    const version = report.software_version ?? node.software_version;
    if (report.software_version !== undefined) update.software_version = report.software_version;
    if (report.upgrade !== undefined) {
      const status = report.upgrade.status;
      if (node.upgrade_status !== null && node.upgrade_status !== status) {
        nodeChange({
          type: 'NODE_UPGRADE',
          condition: status,
          resource: nodeResource,
          previous: node.software_version,
          current: version ?? status,
        });
      }
      update.upgrade_status = status;
    }
    if (report.certificate !== undefined) {
      const notBefore = Date.parse(report.certificate.not_before);
      const notAfter = Date.parse(report.certificate.not_after);
      if (notBefore !== node.cert_not_before || notAfter !== node.cert_not_after) {
        await scheduleCertificateChecks(ctx.jobs, trx, node.id, notBefore, notAfter);
        if (await renewsWarnedCertificate(trx, node.id, node.cert_not_after, notAfter)) {
          const [previous, current] = [isoUtc(node.cert_not_after as number), isoUtc(notAfter)];
          nodeChange({ type: 'CERT_EXPIRY', condition: RENEWED, resource: nodeResource, previous, current });
        }
      }
      update.cert_not_before = notBefore;
      update.cert_not_after = notAfter;
    }
    update.sequence = nodeSequence;
    // What is behind each tunnel's or service's change, as read with them (`behind`).
    const statesBehind = new Map<string, StatesBehind>();

    for (const [table, list, type] of [
      [
        'tunnels',
        report.tunnels?.map((t) => ({
          key: t.key,
          name: t.name,
          state: t.state,
          peer: t.peer_node_id ?? null,
        })),
        'TUNNEL_STATE_CHANGE',
      ],
      [
        'services',
        report.services?.map((s) => ({ key: s.key, name: s.name, state: s.status })),
        'SERVICE_STATE_CHANGE',
      ],
    ] as const) {
      if (list === undefined || list.length === 0) continue;
      // Read with the node, which was asked for them because the report lists them.
      const stored = node[table]!;
      const plan = planResources(stored, list);
      const kind = table === 'tunnels' ? 'tunnel' : 'service';
      const added = plan.added.map((resource) => ({ ...resource, id: newId(now) }));
      await resources.insertResources(
        trx,
        table,
        added.map((resource) => ({ ...resource, peer_node_id: resource.peer, node_id: node.id, at: now })),
      );
      for (const resource of added) {
        const states = behind(table, resource.peer ?? null);
        if (states !== undefined) statesBehind.set(resource.id, states);
        changes.push({
          type,
          condition: resource.state,
          resource: { kind, id: resource.id, name: resource.name },
          previous: null,
          current: resource.state,
          sequence: 1,
        });
      }
      for (const { stored: before, reported } of plan.changed) {
        const { sequence: last, peer_state: peerState } = before as resources.StoredWithSequence;
        const sequence = last + 1;
        const states = behind(table, reported.peer ?? null, { peer: before.peer ?? null, state: peerState });
        if (states !== undefined) statesBehind.set(before.id, states);
        await resources.updateResource(trx, table, before.id, {
          name: reported.name,
          state: reported.state,
          sequence,
          stateSince: now,
          peerNodeId: reported.peer,
        });
        changes.push({
          type,
          condition: reported.state,
          resource: { kind, id: before.id, name: reported.name },
          previous: before.state,
          current: reported.state,
          sequence,
        });
      }
      if (added.length > 0 || plan.changed.length > 0)
        update[DOWN_COLUMN[table]] = downAfter(resources.GOOD_STATE[table], stored, plan, added);
      for (const { stored: before, reported } of plan.updated) {
        await resources.updateResource(trx, table, before.id, {
          name: reported.name,
          peerNodeId: reported.peer,
        });
      }
    }

    await updateNode(trx, node.id, update);
    await recordEvents(
      ctx,
      trx,
      changes.map((change) => ({
        id: newId(now),
        type: change.type,
        condition: change.condition,
        org_id: node.org_id,
        node_id: node.id,
        resource_kind: change.resource.kind,
        resource_id: change.resource.id,
        resource_name: change.resource.name,
        previous_state: change.previous,
        current_state: change.current,
        sequence: change.sequence,
        occurred_at: now,
        detected_at: now,
      })),
      { names: new Map([[node.id, node.name]]), statesBehind },
    );
  });
}
