import { deliveryLogRoutes } from './features/deliveries/routes.js';
import { notificationRoutes } from './features/notifications/routes.js';
import { incidentRoutes } from './features/incidents/routes.js';
import { notificationStatsRoutes } from './features/notifications/stats-routes.js';
import { silenceRoutes } from './features/silences/routes.js';
import { HeartbeatBuffer } from './features/fleet/reports/heartbeats.js';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import secureJson from 'secure-json-parse';
import type { AppContext } from './context.js';
import { requirePermission } from './http/auth.js';
import { AppError } from './http/errors.js';
import { errorHandler, renderError } from './http/error-handler.js';
import { RouteTable } from './http/method-not-allowed.js';
import { rejectNulCharacters } from './http/no-nul.js';
import type { App } from './http/types.js';
import { validatorByPart } from './http/validation.js';
import { plainJsonType } from './http/json-type.js';
import { parseUntypedBody } from './http/untyped-body.js';
import { consoleRoutes } from './http/console.js';
import { openApiInfo } from './http/openapi.js';
import { NotificationSchema } from './features/notifications/payload-schema.js';
import { createHttpMetrics } from './observability/metrics.js';
import { redactUrl } from './observability/logger.js';
import { logAnswered } from './observability/request-log.js';
import { healthRoutes } from './features/health/routes.js';
import { roleRoutes } from './features/roles/routes.js';
import { userRoutes } from './features/users/routes.js';
import { userDirectoryRoutes } from './features/users/directory-routes.js';
import { authRoutes } from './features/auth/routes.js';
import { apiKeyRoutes } from './features/apikeys/routes.js';
import { orgRoutes } from './features/orgs/routes.js';
import { webhookRoutes } from './features/webhooks/routes.js';
import { addServerSpans } from './observability/http-spans.js';
import { tracingEnabled } from './observability/tracing.js';
import { channelRoutes } from './features/channels/routes.js';
import { alertRoutes } from './features/alerts/routes.js';
import { nodeRoutes } from './features/fleet/nodes/routes.js';
import { reportRoutes } from './features/fleet/reports/routes.js';
import { eventRoutes } from './features/fleet/events/routes.js';
import { fleetHistoryRoutes } from './features/fleet/history/routes.js';
import { availabilityRoutes } from './features/fleet/availability/routes.js';
import { resourceRoutes } from './features/fleet/resources/routes.js';
import type { Listener } from './db/listener.js';
import { hearRevocations } from './features/apikeys/revocations.js';

export const BODY_LIMIT = 64 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export async function buildApp(ctx: AppContext): Promise<App> {
  const loggerInstance: FastifyBaseLogger = ctx.logger;
  const app = Fastify({
    loggerInstance,
    // One access-log line per request, written at its answer (observability/request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: true },
    trustProxy: false,
    requestIdHeader: false,
    // A caller's own X-Request-Id is kept when it is sane, so logs can be joined across systems.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : crypto.randomUUID();
    },
    schemaController: { compilersFactory: { buildValidator: validatorByPart } },
    // Router-level faults (over-long path parameters, broken percent-encoding) in the contract's shape.
    frameworkErrors: (error, request, reply) => {
      void reply.header('x-request-id', request.id);
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const message = tooLong
        ? 'No resource has an id that long.'
        : 'The URL is malformed (bad percent-encoding).';
      void renderError(new AppError(tooLong ? 404 : 400, message), reply);
    },
    // While stopping, a request that still arrives on an open connection is served (and that connection
    // closed) rather than answered with the framework's own 503 body, which is not the error shape.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('ctx', ctx);
  if (tracingEnabled()) addServerSpans(app);
  const heartbeats = new HeartbeatBuffer(ctx);
  app.decorate('heartbeats', heartbeats);
  let revocations: Listener | undefined;
  app.addHook('onReady', async () => {
    heartbeats.start();
    revocations = await hearRevocations(ctx);
  });
  app.addHook('onClose', async () => {
    await revocations?.close();
    await heartbeats.stop();
  });
  app.decorateRequest('actor', undefined);
  const metrics = createHttpMetrics(ctx.metrics);
  const routeTable = new RouteTable();

  app.addHook('onRoute', (route) => {
    routeTable.add(route);
    const declared = route.config?.permission !== undefined || route.config?.public === true;
    if (route.url.startsWith('/api/') && !declared) {
      throw new Error(`${String(route.method)} ${route.url} must declare the permission it needs, or public`);
    }
    const permission = route.config?.permission;
    if (permission !== undefined) {
      // Authentication comes before the route's own hooks, and before body parsing (decision 0001).
      const own = route.onRequest === undefined ? [] : [route.onRequest].flat();
      route.onRequest = [requirePermission(permission), ...own];
      // The permission is published too, so clients (and the security tests) can see what each route needs.
      route.schema = {
        ...route.schema,
        security: [{ apiKey: [] }],
        'x-permission': permission,
      } as typeof route.schema;
    }
  });
  app.addHook('preValidation', rejectNulCharacters);
  // Graceful stop: requests in flight when closing starts are answered with `Connection: close`, so
  // keep-alive clients cannot hold the process open after their last answer.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // Every answer that goes through the lifecycle passes here, errors included; router faults, which
  // do not, set the request id themselves.
  app.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('x-request-id', request.id);
    plainJsonType(reply);
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onRequest', (request, _reply, done) => {
    request.log.debug({ req: request }, 'incoming request');
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observe(request, reply);
    logAnswered(request, reply, ctx.config.logRequests);
    done();
  });

  // JSON only. An empty body is no body: the reference has clients send the JSON content type on
  // every request, GET and DELETE included.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(new AppError(400, 'The body is not valid JSON.'), undefined);
    }
  });
  // Any other type, or none: a request that sends nothing has no body, whatever its framing.
  app.addContentTypeParser('*', parseUntypedBody);

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) => {
    const allowed = routeTable.allowed(request.url);
    if (allowed !== undefined) {
      void reply.header('allow', allowed.join(', '));
      return renderError(
        new AppError(405, `${request.method} is not allowed here; use ${allowed.join(', ')}.`),
        reply,
      );
    }
    return renderError(
      new AppError(404, `No route ${request.method} ${redactUrl(request.url.split('?')[0] ?? '')}.`),
      reply,
    );
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: openApiInfo,
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY' },
          nodeToken: { type: 'apiKey', in: 'header', name: 'X-NODE-TOKEN' },
        },
        schemas: { Notification: NotificationSchema },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  await app.register(healthRoutes);
  await app.register(roleRoutes);
  await app.register(userRoutes);
  await app.register(userDirectoryRoutes);
  await app.register(authRoutes);
  await app.register(apiKeyRoutes);
  await app.register(orgRoutes);
  await app.register(webhookRoutes);
  await app.register(channelRoutes);
  await app.register(alertRoutes);
  await app.register(nodeRoutes);
  await app.register(reportRoutes);
  await app.register(eventRoutes);
  await app.register(fleetHistoryRoutes);
  await app.register(availabilityRoutes);
  await app.register(resourceRoutes);
  await app.register(notificationRoutes);
  await app.register(incidentRoutes);
  await app.register(notificationStatsRoutes);
  await app.register(deliveryLogRoutes);
  await app.register(silenceRoutes);
  await app.register(consoleRoutes);
  return app;
}
