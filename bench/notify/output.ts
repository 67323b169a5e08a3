// The section's printed part: what ran, then the two tables.
import { HEARTBEAT_TIMEOUT_S } from './service.js';
import type { LatencyResult } from './measure.js';
import { REPORTS_IN_FLIGHT } from './measure.js';
import type { NotifyOptions } from './options.js';
import { latencyTable, throughputTable, whole, type ThroughputRow } from './report.js';

export interface SectionFacts {
  settings: NotifyOptions;
  nodes: number;
  seedTimes: string[];
  postgresLine: string | undefined;
  alertmanagerLine: string | undefined;
  loadBefore: number;
  /** Bytes of the body the floor sent (one the service had sent). */
  floorBodyBytes: number | undefined;
}

export function sectionOutput(
  facts: SectionFacts,
  latencies: LatencyResult[],
  rows: ThroughputRow[],
): string[] {
  const { settings } = facts;
  const output: string[] = [];
  // Of the one-process services; the worker-scaling measurement describes its own processes.
  if (latencies.length > 0 || rows.length > 0)
    output.push(
      `Notifications: one \`serve\` process per database (API and worker together), as \`npm start\` runs it, with ` +
        `DELIVERY_CONCURRENCY_PER_WEBHOOK=${settings.concurrency} (the default is 8) and ` +
        `NODE_HEARTBEAT_TIMEOUT_S=${HEARTBEAT_TIMEOUT_S}; ${whole(facts.nodes)} nodes seeded ALIVE with one ` +
        `CONNECTED tunnel each (${facts.seedTimes.join(', ')}); one webhook to an HTTPS receiver in the runner (a ` +
        'certificate from the bench CA; verified through the API), one alert: TUNNEL_STATE_CHANGE on the root ' +
        "organization, channel webhook. A change is one node's report naming its tunnel in the other state: one " +
        'event, one notification. The service stores each notification, its delivery and its job in the ' +
        "report's transaction before anything is sent, so every notification measured here was durable first.",
    );
  if (facts.postgresLine !== undefined) output.push(facts.postgresLine);
  if (facts.alertmanagerLine !== undefined) output.push(facts.alertmanagerLine);
  output.push(`Machine load average (1 min) when the section started: ${facts.loadBefore.toFixed(2)}`);
  if (latencies.length > 0) {
    output.push(
      `\nLatency: ${settings.ratePerSecond} changes/s (open loop), ${settings.latencyWarmupSeconds} s untimed then ` +
        `${settings.latencySeconds} s timed; from the report's send (POST /api/v1/agent/report with X-NODE-TOKEN) ` +
        'to the signed notification received whole, both timed in the runner\n',
    );
    output.push(latencyTable(latencies));
  }
  if (rows.length > 0) {
    const rounds = settings.rounds === 1 ? 'one round' : `median of ${settings.rounds} rounds`;
    output.push(
      `\nThroughput: ${whole(settings.changes)} changes, one report per node, ${REPORTS_IN_FLIGHT} reports in ` +
        `flight; from the first report sent to the ${whole(settings.changes)}th distinct notification received ` +
        `(by X-Service-Delivery); ${rounds} (a round: the service on each database, then the floor, then ` +
        'Alertmanager). Floor: a process POSTing the ' +
        `same signed body (${whole(facts.floorBodyBytes ?? 0)} bytes, one the service sent) to the same receiver, ` +
        `${settings.concurrency} in flight over as many kept-alive connections (undici Pool). Sending CPU: the ` +
        "service's process (and the PostgreSQL backends of its database), the floor's, Alertmanager's; runner " +
        "CPU: the receiver (and, in the service's rounds, the reports sent)\n",
    );
    output.push(throughputTable(rows));
    const settles = rows.flatMap((r) =>
      r.settleMs === undefined ? [] : [`${r.name} ${r.settleMs.toFixed(0)} ms`],
    );
    if (settles.length > 0)
      output.push(`\nEvery delivery recorded after the last notification arrived: ${settles.join('; ')}`);
  }
  return output;
}
