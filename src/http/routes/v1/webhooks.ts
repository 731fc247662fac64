// /api/v1/webhooks: a workspace's webhook endpoints (DESIGN §9), their delivery log with replay, a test event and
// secret roll-over. Keys need webhooks:read or webhooks:write; in the web UI, only admins manage webhooks.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { cursorParam, linkNextPage } from '../../pagination.ts';
import {
  answer, authProblems, Cursor, dataOf, IdParam, Limit, listOf, problem, WebhookDelivery, WebhookEndpoint,
  WebhookEndpointCreate, WebhookEndpointUpdate, WebhookEndpointWithSecret, writeProblems,
} from '../../../schemas/index.ts';
import { AppError, notFound } from '../../../domain/errors.ts';
import {
  checkEndpointUrl, createEndpoint, ENDPOINTS_MAX, deleteEndpoint, getEndpoint, listDeliveries, listEndpoints, replayDelivery, rotateSecret,
  sendTestEvent, updateEndpoint,
} from '../../../domain/webhooks/endpoints.ts';

const tags = ['Webhooks'];
const DeliveryParams = Type.Object({ id: Type.String({ maxLength: 100, description: 'Identifier (UUID) of the endpoint.' }), deliveryId: Type.String({ maxLength: 100, description: 'Identifier (UUID) of the delivery.' }) });
const stateProblem = { 409: problem('The endpoint is disabled, or the workspace has as many endpoints as it may.') };
// What an endpoint receives is what its maker may read: said once, in the operations that set it.
const READ_SCOPES_RULE = 'An endpoint receives only what the key that set its `url` or `events` may read: '
  + '`lead.*` events need leads:read, `run.*` and `draft.*` events runs:read, and no `events` (every type) both. A '
  + 'key without the scope of a type it names (or of every type) is refused with 403 `insufficient_scope` naming the '
  + 'scope. Endpoints made in the UI or with `leadrun webhook create` (an admin) may receive every type.';

/** A person in the web UI manages webhooks only as an admin; a key needs its scope alone. */
function adminsOnly(request: FastifyRequest): void {
  const principal = principalOf(request);
  if (principal.source === 'ui' && principal.role !== 'ADMIN') throw new AppError('forbidden', 'Only workspace admins can manage webhooks.');
}

export default async function webhookRoutes(app: AppInstance): Promise<void> {
  const { db, clock, config } = app.deps;
  const endpointDeps = { secrets: app.deps.secrets, clock, allowPrivateHosts: config.allowPrivateHosts };
  const preHandler = async (request: FastifyRequest) => adminsOnly(request);

  app.get('/api/v1/webhooks', {
    config: { scope: 'webhooks:read' },
    preHandler,
    schema: {
      operationId: 'listWebhooks',
      summary: 'List webhook endpoints',
      description: 'Oldest first. Secrets are never shown.',
      tags,
      response: { 200: answer('The endpoints, oldest first.', listOf(WebhookEndpoint, ENDPOINTS_MAX)), ...authProblems },
    },
  }, async (request) => ({ data: await listEndpoints(db, principalOf(request).workspaceId) }));

  app.post('/api/v1/webhooks', {
    config: { scope: 'webhooks:write', auditAction: 'webhook.created' },
    preHandler,
    schema: {
      operationId: 'createWebhook',
      summary: 'Add a webhook endpoint',
      description: 'Answers the endpoint with its signing `secret`, shown this once. The URL must be http or https, without '
        + 'a user name or password, and its host must resolve to a public address (unless the installation allows '
        + `private hosts). ${READ_SCOPES_RULE}`,
      tags,
      body: WebhookEndpointCreate,
      response: {
        201: answer('The endpoint, with its signing secret shown this once.', WebhookEndpointWithSecret),
        ...stateProblem,
        ...writeProblems,
        ...authProblems,
      },
    },
  }, async (request, reply) => {
    // Resolved before the transaction: a slow DNS answer must not hold the workspace locked.
    await checkEndpointUrl(request.body.url, config.allowPrivateHosts);
    return mutate(app.deps, request, reply, async (trx) => {
      const { workspaceId, scopes } = principalOf(request);
      const endpoint = await createEndpoint(trx, workspaceId, request.body, endpointDeps, scopes);
      return { status: 201, body: endpoint, location: `/api/v1/webhooks/${endpoint.id}`, target: { type: 'webhook', id: endpoint.id } };
    });
  });

  app.get('/api/v1/webhooks/:id', {
    config: { scope: 'webhooks:read' },
    preHandler,
    schema: {
      operationId: 'getWebhook',
      summary: 'Get a webhook endpoint',
      tags,
      params: IdParam,
      response: { 200: answer('The endpoint.', dataOf(WebhookEndpoint)), ...authProblems },
    },
  }, async (request) => {
    const endpoint = await getEndpoint(db, principalOf(request).workspaceId, request.params.id);
    if (!endpoint) throw notFound('Webhook endpoint');
    return { data: endpoint };
  });

  app.patch('/api/v1/webhooks/:id', {
    config: { scope: 'webhooks:write', auditAction: 'webhook.updated' },
    preHandler,
    schema: {
      operationId: 'updateWebhook',
      summary: 'Change a webhook endpoint',
      description: 'Changes only the fields sent. `enabled: true` enables a disabled endpoint again and clears its '
        + `failures. Changing \`url\` or \`events\` sets the endpoint up anew: ${READ_SCOPES_RULE} So a key may not `
        + 'point an endpoint receiving what it cannot read elsewhere; its pending deliveries outside the key\'s scopes '
        + 'are not sent.',
      tags, params: IdParam, body: WebhookEndpointUpdate,
      response: { 200: answer('The endpoint as updated.', dataOf(WebhookEndpoint)), ...writeProblems, ...authProblems },
    },
  }, async (request, reply) => {
    if (request.body.url !== undefined) await checkEndpointUrl(request.body.url, config.allowPrivateHosts);
    return mutate(app.deps, request, reply, async (trx) => {
      const { workspaceId, scopes } = principalOf(request);
      const endpoint = await updateEndpoint(trx, workspaceId, request.params.id, request.body, clock, scopes);
      return { status: 200, body: { data: endpoint }, target: { type: 'webhook', id: endpoint.id } };
    });
  });

  app.delete('/api/v1/webhooks/:id', {
    config: { scope: 'webhooks:write', auditAction: 'webhook.deleted' },
    preHandler,
    schema: {
      operationId: 'deleteWebhook',
      summary: 'Remove a webhook endpoint',
      description: 'Removes it with its delivery log; nothing more is sent to it.',
      tags, params: IdParam, response: { 204: Type.Null({ description: 'Removed.' }), ...authProblems },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const endpoint = await deleteEndpoint(trx, principalOf(request).workspaceId, request.params.id);
    return { status: 204, body: null, target: { type: 'webhook', id: endpoint.id } };
  }));

  app.get('/api/v1/webhooks/:id/deliveries', {
    config: { scope: 'webhooks:read' },
    preHandler,
    schema: {
      operationId: 'listWebhookDeliveries',
      summary: 'List an endpoint\'s deliveries',
      description: 'The delivery log, newest first: each delivery\'s status, attempts and the last answer (status, time, the first '
        + '1 KB of its body). The next page is linked by a `Link: <…>; rel="next"` header.',
      tags, params: IdParam,
      querystring: Type.Object({ limit: Limit(50, 100), cursor: Type.Optional(Cursor) }),
      response: {
        200: answer(
          "A page of the endpoint's deliveries, newest first; `Link` names the next page.",
          listOf(WebhookDelivery, 100),
        ),
        ...authProblems,
      },
    },
  }, async (request, reply) => {
    const page = await listDeliveries(db, principalOf(request).workspaceId, request.params.id, {
      limit: request.query.limit, cursor: cursorParam(request.query.cursor),
    });
    if (!page) throw notFound('Webhook endpoint');
    linkNextPage(reply, `/api/v1/webhooks/${request.params.id}/deliveries`, page.next, request.query);
    return { data: page.items };
  });

  app.post('/api/v1/webhooks/:id/deliveries/:deliveryId/retry', {
    config: { scope: 'webhooks:write', auditAction: 'webhook.delivery_replayed' },
    preHandler,
    schema: {
      operationId: 'retryWebhookDelivery',
      summary: 'Replay a delivery',
      description: 'Sends the delivery\'s event to the endpoint again, as a new delivery with the same `webhook-id`. '
        + 'Refused with 409 when the endpoint may no longer receive the event\'s type: its `url` or `events` were set '
        + 'since by a key without the type\'s read scope.',
      tags, params: DeliveryParams,
      response: {
        202: answer('The new delivery of the same event, queued.', dataOf(WebhookDelivery)),
        ...stateProblem,
        ...writeProblems,
        ...authProblems,
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const { id, deliveryId } = request.params;
    const delivery = await replayDelivery(trx, principalOf(request).workspaceId, id, deliveryId, clock);
    return { status: 202, body: { data: delivery }, target: { type: 'webhook', id } };
  }));

  app.post('/api/v1/webhooks/:id/test', {
    config: { scope: 'webhooks:write', auditAction: 'webhook.test_sent' },
    preHandler,
    schema: {
      operationId: 'sendWebhookTestEvent',
      summary: 'Send a test event',
      description: 'A `webhook.test` event, to this endpoint alone; its delivery shows in the log. It carries no lead '
        + 'or run, so it needs no read scope.',
      tags, params: IdParam,
      response: {
        202: answer('The delivery of the test event, queued.', dataOf(WebhookDelivery)),
        ...stateProblem,
        ...writeProblems,
        ...authProblems,
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const delivery = await sendTestEvent(trx, principalOf(request).workspaceId, request.params.id, clock);
    return { status: 202, body: { data: delivery }, target: { type: 'webhook', id: request.params.id } };
  }));

  app.post('/api/v1/webhooks/:id/rotate-secret', {
    config: { scope: 'webhooks:write', auditAction: 'webhook.secret_rotated' },
    preHandler,
    schema: {
      operationId: 'rotateWebhookSecret',
      summary: 'Roll the signing secret',
      description: 'Answers the new `secret`, shown this once. For 24 hours the previous secret signs too (two signatures in '
        + '`webhook-signature`), so receivers can switch without losing an event.',
      tags, params: IdParam,
      response: {
        200: answer(
          'The endpoint with its new secret, shown this once; the previous one signs too for 24 hours.',
          WebhookEndpointWithSecret,
        ),
        ...writeProblems,
        ...authProblems,
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const endpoint = await rotateSecret(trx, principalOf(request).workspaceId, request.params.id, endpointDeps);
    return { status: 200, body: endpoint, target: { type: 'webhook', id: endpoint.id } };
  }));
}
