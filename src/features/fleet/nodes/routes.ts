import { contextOf } from '../../../http/auth.js';
import { BulkAnswer } from '../../../http/bulk.js';
import { listSchema, pageRequest } from '../../../http/lists.js';
import type { App } from '../../../http/types.js';
import { DeleteWithAlertsAnswer, IdParams, responses } from '../../../http/schemas.js';
import * as schemas from './schemas.js';
import {
  deleteNode,
  deleteNodes,
  editNode,
  getNode,
  listNodes,
  registerNode,
  renewNodeToken,
} from './service.js';

const tags = ['fleet'];

export async function nodeRoutes(app: App): Promise<void> {
  app.post(
    '/api/v1/node',
    {
      config: { permission: 'fleet:write' },
      schema: {
        tags,
        summary: 'Register a node; the answer carries its token, shown this once',
        description:
          "The node starts NEW and becomes ALIVE with its agent's first report (X-NODE-TOKEN: the token). " +
          'create_under outside your organizations → 404; a hardware_serial_number already registered → 409.',
        body: schemas.CreateNodeBody,
        response: responses({ 201: schemas.NodeWithToken }, [400, 401, 403, 404, 409, 413, 415]),
      },
    },
    async (request, reply) => reply.code(201).send(await registerNode(contextOf(request), request.body)),
  );

  app.get(
    '/api/v2/node',
    {
      config: { permission: 'fleet:read' },
      schema: {
        tags,
        summary: 'The nodes of an organization (and those below it)',
        ...listSchema({
          item: schemas.Node,
          order: 'by name, then id; or as sort says',
          filters: schemas.NodeListFilters,
          ownership: 'unowned',
        }),
      },
    },
    async (request) => {
      const { page, size, ...filters } = request.query;
      return listNodes(contextOf(request), filters, pageRequest({ page, size }));
    },
  );

  app.get(
    '/api/v1/node/:id',
    {
      config: { permission: 'fleet:read' },
      schema: {
        tags,
        summary: 'One node',
        params: IdParams,
        response: responses({ 200: schemas.Node }, [401, 403, 404]),
      },
    },
    async (request) => getNode(contextOf(request), request.params.id),
  );

  app.put(
    '/api/v1/node/:id',
    {
      config: { permission: 'fleet:write' },
      schema: {
        tags,
        summary: "Edit a node's name, labels or headless time",
        params: IdParams,
        body: schemas.EditNodeBody,
        response: responses({ 200: schemas.Node }, [400, 401, 403, 404, 413, 415]),
      },
    },
    async (request) => editNode(contextOf(request), request.params.id, request.body),
  );

  app.delete(
    '/api/v1/node/:id',
    {
      config: { permission: 'fleet:write' },
      schema: {
        tags,
        summary: 'Remove a node with its tunnels and services',
        description:
          'Alerts scoped to the node, its tunnels or its services (settings.node_id, tunnel_id, pod_id) and no ' +
          'force=true → 409, nothing removed. With force=true they are removed too, in the same transaction, ' +
          'and listed in removed_alert_ids.',
        params: IdParams,
        querystring: schemas.DeleteNodeQuery,
        response: responses({ 200: DeleteWithAlertsAnswer }, [400, 401, 403, 404, 409]),
      },
    },
    async (request) => deleteNode(contextOf(request), request.params.id, request.query.force === 'true'),
  );

  app.post(
    '/api/v1/node/delete',
    {
      config: { permission: 'fleet:write' },
      schema: {
        tags,
        summary: 'Remove several nodes',
        description:
          'Each id is removed as DELETE /api/v1/node/{id} would remove it, in a transaction of its own, and ' +
          'has its own result: 200 with the removal, or the error that id alone would have answered (404 not ' +
          'visible, 409 alerts scoped to it without force). The call answers 200 once every id was tried.',
        body: schemas.DeleteNodesBody,
        response: responses({ 200: BulkAnswer(DeleteWithAlertsAnswer) }, [400, 401, 403, 413, 415]),
      },
    },
    async (request) => deleteNodes(contextOf(request), request.body.ids, request.body.force === true),
  );

  app.post(
    '/api/v1/node/:id/token',
    {
      config: { permission: 'fleet:write' },
      schema: {
        tags,
        summary: 'Issue a new token for a node; the old one stops working at once',
        params: IdParams,
        response: responses({ 200: schemas.NodeWithToken }, [401, 403, 404]),
      },
    },
    async (request) => renewNodeToken(contextOf(request), request.params.id),
  );
}
