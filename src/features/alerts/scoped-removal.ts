import type { Executor } from '../../db/types.js';
import { conflict } from '../../http/errors.js';
import { touchSubscriptions } from '../users/repo.js';
import { alertsScopedTo, deleteAlerts, type ScopeTarget } from './repo.js';

/**
 * Before a node, tunnel or service is removed, in the removal's transaction: alerts scoped to it make
 * the removal a 409 and nothing changes, unless `force`, which removes them too (as for a webhook).
 * Returns the ids of the alerts removed.
 */
export async function releaseScopedAlerts(
  trx: Executor,
  target: ScopeTarget,
  what: string,
  force: boolean,
): Promise<string[]> {
  const alerts = await alertsScopedTo(trx, target);
  if (alerts.length === 0) return [];
  if (!force) {
    throw conflict(
      `The ${what} is watched by ${alerts.length} alert(s) scoped to it; delete them first or repeat with ` +
        '?force=true to delete them too.',
    );
  }
  for (const userId of new Set(alerts.map((alert) => alert.user_id))) await touchSubscriptions(trx, userId);
  const ids = alerts.map((alert) => alert.id);
  await deleteAlerts(trx, ids);
  return ids;
}

/** The answer of a removal that may have taken alerts with it. */
export function removalAnswer(id: string, what: string, done: string, force: boolean, removed: string[]) {
  return {
    id,
    message: removed.length > 0 ? `${what} ${done} with ${removed.length} alert(s).` : `${what} ${done}.`,
    status: 'SUCCESS' as const,
    ...(force ? { removed_alert_ids: removed } : {}),
  };
}
