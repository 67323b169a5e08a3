import { contextOf } from '../../http/auth.js';
import { BulkAnswer } from '../../http/bulk.js';
import { listSchema, pageRequest } from '../../http/lists.js';
import { IdParams, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import * as schemas from './schemas.js';
import { createNodeSilences, createSilence, endSilence, getSilence, listSilences } from './service.js';

const tags = ['silences'];
const SCOPE = "Windows of the caller's organization and those below it; any other → 404.";

/** Maintenance windows: what they cover is stored as suppressed, and what still holds is sent at the end. */
export async function silenceRoutes(app: App): Promise<void> {
  app.post(
    '/api/v1/silence',
    {
      config: { permission: 'alerts:write' },
      schema: {
        tags,
        summary: 'Open a maintenance window',
        description:
          'While it is open (starts_at ≤ now < ends_at), every notification for a change on its organization ' +
          '(and those below, with include_child), its node if given, and its types if given, is stored as ' +
          'suppressed with reason maintenance and the window’s id, and not sent. When it ends, each alert whose ' +
          'notifications it held back gets one notification if the resource is still as the last of them ' +
          'left it, and differs from before the first (a node down and still down is told; one that came ' +
          'back is not). A window is one-off (starts_at and ends_at) or recurring (recurrence, optional ' +
          'until; not both): a recurring one holds back during each occurrence as a one-off window does, and ' +
          'tells at the end of each what that occurrence held back. Its occurrences open at a local time in ' +
          'a named time zone, so daylight-saving changes keep the local time. Operator and Admin.',
        body: schemas.CreateSilenceBody,
        response: responses(
          { 200: BulkAnswer(schemas.Silence), 201: schemas.Silence },
          [400, 401, 403, 404, 413, 415],
        ),
      },
    },
    async (request, reply) => {
      const { node_ids: nodeIds, ...input } = request.body;
      if (nodeIds === undefined) return reply.code(201).send(await createSilence(contextOf(request), input));
      return createNodeSilences(contextOf(request), input, nodeIds);
    },
  );

  app.get(
    '/api/v2/silence',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags,
        summary: 'Maintenance windows',
        ...listSchema({
          item: schemas.Silence,
          order:
            `latest start first (starts_at, then id). ${SCOPE} Each window carries next_occurrence: the ` +
            'occurrence open now or the next one, null when none is left; a recurring window is active ' +
            'from its first occurrence’s start to its last one’s end',
          filters: schemas.silenceFilters,
          ownership: 'unowned',
        }),
      },
    },
    async (request) => {
      const { page, size, ...query } = request.query;
      return listSilences(contextOf(request), query, pageRequest({ page, size }));
    },
  );

  app.get(
    '/api/v1/silence/:id',
    {
      config: { permission: 'alerts:read' },
      schema: {
        tags,
        summary: 'One maintenance window',
        description: SCOPE,
        params: IdParams,
        response: responses({ 200: schemas.Silence }, [401, 403, 404]),
      },
    },
    async (request) => getSilence(contextOf(request), request.params.id),
  );

  app.delete(
    '/api/v1/silence/:id',
    {
      config: { permission: 'alerts:write' },
      schema: {
        tags,
        summary: 'End a maintenance window early',
        description:
          'One under way ends now (state ended; what it held back and still holds is sent); one not started ' +
          'yet is removed (state cancelled); one already over → 409. A recurring window is under way from ' +
          'its first occurrence on: ending it ends the occurrence open now, if any, and every one to come. ' +
          SCOPE,
        params: IdParams,
        response: responses({ 200: schemas.Silence }, [401, 403, 404, 409]),
      },
    },
    async (request) => endSilence(contextOf(request), request.params.id),
  );
}
