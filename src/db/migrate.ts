import { Migrator, PostgresAdapter, sql, type Migration } from 'kysely';
import type { Db } from './types.js';
import * as foundation from './migrations/0001_foundation.js';
import * as webhooks from './migrations/0002_webhooks.js';
import * as alerts from './migrations/0003_alerts.js';
import * as subscriptionsVersion from './migrations/0004_subscriptions_version.js';
import * as loginAttemptsAt from './migrations/0005_login_attempts_at.js';
import * as alertVocabulary from './migrations/0006_alert_vocabulary.js';
import * as jobs from './migrations/0007_jobs.js';
import * as fleet from './migrations/0008_fleet.js';
import * as alertScopes from './migrations/0009_alert_scopes.js';
import * as reportDigest from './migrations/0010_report_digest.js';
import * as notifications from './migrations/0011_notifications.js';
import * as topologySuppression from './migrations/0012_topology_suppression.js';
import * as silences from './migrations/0013_silences.js';
import * as emailDigests from './migrations/0014_email_digests.js';
import * as pendingDeliveriesIndex from './migrations/0015_pending_deliveries_index.js';
import * as jobsDueIndexById from './migrations/0016_jobs_due_index_by_id.js';
import * as deliveryQueue from './migrations/0017_delivery_queue.js';
import * as deliveryClaimIndexes from './migrations/0018_delivery_claim_indexes.js';
import * as lighterNotificationIndexes from './migrations/0019_lighter_notification_indexes.js';
import * as channels from './migrations/0020_channels.js';
import * as nodeSort from './migrations/0021_node_sort.js';
import * as fleetHistory from './migrations/0022_fleet_history.js';
import * as notificationsByOrg from './migrations/0023_notifications_by_org.js';
import * as nodeResourceCounts from './migrations/0024_node_resource_counts.js';
import * as nodeClientSettings from './migrations/0025_node_client_settings.js';
import * as matchingVersion from './migrations/0026_matching_version.js';
import * as noPendingDeliveriesIndex from './migrations/0027_no_pending_deliveries_index.js';
import * as successOnDelivery from './migrations/0028_success_on_delivery.js';
import * as retentionById from './migrations/0029_retention_by_id.js';
import * as alertGrouping from './migrations/0030_alert_grouping.js';
import * as incidents from './migrations/0031_incidents.js';
import * as webhookSecretRotation from './migrations/0032_webhook_secret_rotation.js';
import * as recurringSilences from './migrations/0033_recurring_silences.js';
import * as deliveryTraceparent from './migrations/0034_delivery_traceparent.js';

// Listed here rather than read from disk, so the same code runs from TypeScript sources and from dist/.
const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_webhooks': webhooks,
  '0003_alerts': alerts,
  '0004_subscriptions_version': subscriptionsVersion,
  '0005_login_attempts_at': loginAttemptsAt,
  '0006_alert_vocabulary': alertVocabulary,
  '0007_jobs': jobs,
  '0008_fleet': fleet,
  '0009_alert_scopes': alertScopes,
  '0010_report_digest': reportDigest,
  '0011_notifications': notifications,
  '0012_topology_suppression': topologySuppression,
  '0013_silences': silences,
  '0014_email_digests': emailDigests,
  '0015_pending_deliveries_index': pendingDeliveriesIndex,
  '0016_jobs_due_index_by_id': jobsDueIndexById,
  '0017_delivery_queue': deliveryQueue,
  '0018_delivery_claim_indexes': deliveryClaimIndexes,
  '0019_lighter_notification_indexes': lighterNotificationIndexes,
  '0020_channels': channels,
  '0021_node_sort': nodeSort,
  '0022_fleet_history': fleetHistory,
  '0023_notifications_by_org': notificationsByOrg,
  '0024_node_resource_counts': nodeResourceCounts,
  '0025_node_client_settings': nodeClientSettings,
  '0026_matching_version': matchingVersion,
  '0027_no_pending_deliveries_index': noPendingDeliveriesIndex,
  '0028_success_on_delivery': successOnDelivery,
  '0029_retention_by_id': retentionById,
  '0030_alert_grouping': alertGrouping,
  '0031_incidents': incidents,
  '0032_webhook_secret_rotation': webhookSecretRotation,
  '0033_recurring_silences': recurringSilences,
  '0034_delivery_traceparent': deliveryTraceparent,
};

export interface MigrationReport {
  applied: string[];
}

/**
 * PostgreSQL: the schema the tables go to. Kysely looks for its bookkeeping tables in every schema
 * unless told which one, so another schema's copy (another app, a parallel test) would be taken for ours.
 */
async function migrationSchema(db: Db): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? undefined;
}

export async function migrateToLatest(db: Db): Promise<MigrationReport> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
    migrationTableSchema: await migrationSchema(db),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error !== undefined || failed !== undefined) {
    const name = failed?.migrationName ?? 'unknown';
    throw new Error(`Migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return { applied: (results ?? []).map((result) => result.migrationName) };
}
