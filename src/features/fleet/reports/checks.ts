import type { Executor } from '../../../db/types.js';
import { badRequest } from '../../../http/errors.js';
import type { AgentReport } from './schemas.js';

/** Rules a schema cannot state: one address per type, unique keys, a certificate that ends after it starts. */
export function checkReport(report: AgentReport): void {
  const problems: { field: string; message: string }[] = [];
  const types = (report.addresses ?? []).map((entry) => entry.type);
  if (new Set(types).size !== types.length)
    problems.push({ field: 'addresses', message: 'has two addresses of one type' });
  for (const list of ['tunnels', 'services'] as const) {
    const keys = (report[list] ?? []).map((entry) => entry.key);
    if (new Set(keys).size !== keys.length) problems.push({ field: list, message: 'lists one key twice' });
  }
  if (report.certificate !== undefined) {
    const { not_before: notBefore, not_after: notAfter } = report.certificate;
    if (Date.parse(notBefore) >= Date.parse(notAfter)) {
      problems.push({ field: 'certificate', message: 'not_before must come before not_after' });
    }
  }
  const first = problems[0];
  if (first !== undefined) throw badRequest(`Invalid report: "${first.field}" ${first.message}.`, problems);
}

/** A tunnel's peer must be a registered node (it is kept as a reference to it). */
export async function checkPeers(db: Executor, report: AgentReport): Promise<void> {
  const peers = [...new Set((report.tunnels ?? []).flatMap((tunnel) => tunnel.peer_node_id ?? []))];
  if (peers.length === 0) return;
  const known = await db.selectFrom('nodes').select('id').where('id', 'in', peers).execute();
  const unknown = peers.filter((peer) => !known.some((row) => row.id === peer));
  if (unknown.length > 0) {
    throw badRequest(`Invalid report: tunnel peer_node_id ${unknown[0]} is not a registered node.`, [
      { field: 'tunnels.peer_node_id', message: 'is not a registered node' },
    ]);
  }
}
