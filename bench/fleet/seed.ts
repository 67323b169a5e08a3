// A fleet written straight into a freshly migrated database: the organization from the service's own
// bootstrap, then the nodes, their tunnels and their services in batches, each batch one transaction, holding
// what their agents report. The nodes are ALIVE and were last seen within one report interval. The
// certificate's expiry checks are not scheduled (they would be two future jobs per node, which no report here
// touches): scheduling them one node at a time would take longer than the rest of the seed.
import { randomBytes } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { AppContext } from '../../src/context.js';
import type { NodesTable } from '../../src/db/types.js';
import { bootstrap } from '../../src/features/bootstrap/service.js';
import { insertResources, type NewResource } from '../../src/features/fleet/resources-repo.js';
import { newId } from '../../src/lib/ids.js';
import { sha256Hex } from '../../src/lib/tokens.js';
import { SOFTWARE_VERSION, UPGRADE_STATUS, type Resource, type SimulatedFleet } from './agents.js';

const BATCH = 500;
const HEADLESS_MINUTES = 1_440;

export interface SeedResult {
  orgId: string;
  nodes: number;
  ms: number;
}

/** `idAt` orders the ids as if the nodes had been registered one after the other (UUIDv7 starts with a time). */
function resourceRows(nodeId: string, resources: Resource[], idAt: number, at: number): NewResource[] {
  return resources.map((resource) => ({ ...resource, id: newId(idAt), node_id: nodeId, at }));
}

/** Seeds `fleet` into the context's database; `intervalMs` spreads the nodes' last reports like a cycle. */
export async function seedFleet(
  ctx: AppContext,
  fleet: SimulatedFleet,
  intervalMs: number,
): Promise<SeedResult> {
  const started = performance.now();
  const created = await bootstrap(ctx, {
    orgName: 'Bench fleet',
    adminEmail: 'bench@edgewatch.local',
    presetKey: `ew_bench_${randomBytes(32).toString('base64url')}`,
  });
  if (created.kind !== 'created') throw new Error('the fleet database already had an organization');
  const now = ctx.clock.now();
  const since = now - 86_400_000;
  for (let first = 0; first < fleet.size; first += BATCH) {
    const nodes: Insertable<NodesTable>[] = [];
    const tunnels: NewResource[] = [];
    const services: NewResource[] = [];
    for (let node = first; node < Math.min(first + BATCH, fleet.size); node += 1) {
      const id = newId(since + node);
      nodes.push({
        id,
        org_id: created.orgId,
        name: fleet.name(node),
        hardware_serial_number: `BENCH-${node}`,
        token_hash: sha256Hex(fleet.token(node)),
        labels: '{}',
        max_headless_time: HEADLESS_MINUTES,
        node_state: 'ALIVE',
        state_since: since,
        last_seen_at: now - Math.floor((node * intervalMs) / fleet.size),
        addresses: JSON.stringify(fleet.addresses(node)),
        software_version: SOFTWARE_VERSION,
        upgrade_status: UPGRADE_STATUS,
        cert_not_before: Date.parse(fleet.certificate.not_before),
        cert_not_after: Date.parse(fleet.certificate.not_after),
        sequence: 1,
        created_at: since,
      });
      tunnels.push(...resourceRows(id, fleet.tunnels(node), since + node, since));
      services.push(...resourceRows(id, fleet.services(node), since + node, since));
    }
    await ctx.db.transaction().execute(async (trx) => {
      await trx.insertInto('nodes').values(nodes).execute();
      await insertResources(trx, 'tunnels', tunnels);
      await insertResources(trx, 'services', services);
    });
  }
  return { orgId: created.orgId, nodes: fleet.size, ms: performance.now() - started };
}
