// The reference point of every throughput ratio: bare Fastify answering a constant JSON body, with the
// service's own logger at the same level and to the same kind of destination, and nothing else.
import Fastify from 'fastify';
import { ROLES } from '../src/features/roles/catalog.js';
import { createLogger } from '../src/observability/logger.js';

// The same body the service answers on GET /api/v2/role, so both send the same bytes.
const results = ROLES.map((role) => ({ ...role, permissions: [...role.permissions] }));
const body = { total_count: results.length, results };

const app = Fastify({ loggerInstance: createLogger(process.env.LOG_LEVEL ?? 'info') });
app.get('/api/v2/role', () => body);

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
