import type { ServiceContext } from '../../../context.js';
import { notFound } from '../../../http/errors.js';
import { MINUTE_MS, steppedWindow } from '../../../http/time-window.js';
import { isoUtc } from '../../../lib/clock.js';
import { isInSubtree } from '../../orgs/repo.js';
import { countNow, historySteps, worstOf, type OrgCounts } from './repo.js';

export interface HistoryQuery {
  org_id?: string;
  include_child?: boolean;
  from?: string;
  to?: string;
  step?: string;
}

const GAP = {
  alive: null,
  unreachable: null,
  new: null,
  tunnels_unhealthy: null,
  tunnels_unknown: null,
  services_unhealthy: null,
  services_unknown: null,
};

const present = (point: OrgCounts) => ({
  alive: point.nodes_alive,
  unreachable: point.nodes_unreachable,
  new: point.nodes_new,
  tunnels_unhealthy: point.tunnels_unhealthy,
  tunnels_unknown: point.tunnels_unknown,
  services_unhealthy: point.services_unhealthy,
  services_unknown: point.services_unknown,
});

/**
 * The fleet's counts over time for an organization (and, by default, those below it): a point per step from
 * `from` rounded down to a step until `to`, each the worst minute of every series within it; null where no
 * snapshot was taken in the step; the present minute is the fleet counted now
 * (docs/rules/alerts-and-fleet.md#fleet-history).
 */
export async function fleetHistory(ctx: ServiceContext, query: HistoryQuery) {
  const now = ctx.clock.now();
  const window = steppedWindow(query, now);
  const orgId = query.org_id ?? ctx.actor.orgId;
  if (!(await isInSubtree(ctx.db, ctx.actor.orgId, orgId))) throw notFound('Organization');
  const includeChild = query.include_child ?? true;
  // The present minute is counted now rather than read from its snapshot: the chart's edge is never up to
  // a minute behind the counts beside it, nor held to a snapshot taken before the minute's changes.
  const thisMinute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  const presentStep = window.start + Math.floor((now - window.start) / window.stepMs) * window.stepMs;
  const holdsPresent =
    now >= window.start && now <= window.to && presentStep < window.start + window.points * window.stepMs;
  const steps = await historySteps(ctx.db, {
    orgId,
    includeChild,
    start: window.start,
    to: holdsPresent ? Math.min(window.to, thisMinute) : window.to,
    stepMs: window.stepMs,
  });
  const byStart = new Map<number, OrgCounts>(steps.map((point) => [point.at, point]));
  if (holdsPresent) {
    const live = await countNow(ctx.db, orgId, includeChild);
    const earlier = byStart.get(presentStep);
    byStart.set(presentStep, earlier === undefined ? live : worstOf(earlier, live));
  }
  const points = Array.from({ length: window.points }, (_, i) => {
    const at = window.start + i * window.stepMs;
    const point = byStart.get(at);
    return { at: isoUtc(at), ...(point === undefined ? GAP : present(point)) };
  });
  return {
    org_id: orgId,
    from: isoUtc(window.from),
    to: isoUtc(window.to),
    step_seconds: window.stepMs / 1_000,
    points,
  };
}
