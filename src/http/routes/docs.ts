// The OpenAPI 3.1 document, generated from the route schemas, at /api/v1/openapi.json, and a readable reference
// at /docs: Swagger UI in leadrun's colours, with its mark (src/http/docs-theme/), all served from this server.
import { readFile } from 'node:fs/promises';
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { AppInstance } from '../app-instance.ts';
import { finishDocument, isUiPath, publicDocument, type OpenApiDocument } from '../openapi.ts';
import { docsContentSecurityPolicy } from '../security.ts';

async function apiDocs(app: AppInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'leadrun API',
        version: '1',
        description: 'Leads, their calls, and agent runs that research a company, analyse a call and draft an e-mail. '
          + 'Authenticate with `Authorization: Bearer sk_…`; keys are created in Settings / API keys. '
          + 'Errors are RFC 9457 problem documents with a stable `code`.',
        contact: { name: 'The administrators of this leadrun installation', url: app.deps.config.publicUrl },
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: app.deps.config.publicUrl }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key, sk_…' } } },
      tags: [
        { name: 'Leads', description: 'The people a workspace sells to.' },
        { name: 'Calls', description: 'Conversations held with a lead.' },
        { name: 'Runs', description: 'Agent runs: research, analysis, strategy and an e-mail draft.' },
        { name: 'Sequences', description: 'Follow-up sequences, the enrolment an approval makes, and the touches of a run\'s thread.' },
        { name: 'Replies', description: 'Replies found to the e-mails sent, and what each says.' },
        { name: 'Outbox', description: 'E-mails waiting for a send window, a sender\'s daily limit or their time (DESIGN §14).' },
        { name: 'Suppressions', description: 'The addresses and domains nothing is delivered to: unsubscribes, bounces and entries of your own.' },
        { name: 'Analytics', description: 'What the e-mails sent led to, counted from recorded deliveries and replies.' },
        { name: 'Webhooks', description: 'Endpoints that are sent signed events (Standard Webhooks) as they happen, with their delivery log.' },
        { name: 'Service', description: 'Health, readiness and the API description; no key needed.' },
      ],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: ({ schema, route }) => {
      const scope = route.config && typeof route.config === 'object' && 'scope' in route.config ? route.config.scope : undefined;
      if (!schema) return { schema, url: route.url };
      // A route of the API without a scope needs no key (health, readiness): it says so, rather than leaving it unsaid.
      if (!scope) return { schema: isUiPath(route.url) ? schema : { ...schema, security: [] }, url: route.url };
      return { schema: { ...schema, security: [{ bearerAuth: [] }], description: `${schema.description ?? ''}\n\nRequired scope: \`${String(scope)}\`.`.trim() }, url: route.url };
    },
    transformObject: (written) => ('openapiObject' in written ? finishDocument(written.openapiObject as OpenApiDocument) : written.swaggerObject) as never,
  });
  // Made on first request, once every route is known, and kept: the routes do not change while the app runs.
  let served: OpenApiDocument | null = null;
  const publicApi = () => (served ??= publicDocument(app.swagger() as unknown as OpenApiDocument));
  const asset = (path: string) => readFile(new URL(path, import.meta.url));
  const [logo, css, favicon] = await Promise.all([asset('../docs-theme/logo.svg'), asset('../docs-theme/theme.css'), asset('../../../web/src/favicon.svg')]);
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    transformSpecification: () => publicApi(),
    transformSpecificationClone: false,
    staticCSP: docsContentSecurityPolicy(app.deps.config.publicUrl),
    logo: { type: 'image/svg+xml', content: logo, href: '/docs' },
    theme: {
      title: 'leadrun API reference',
      css: [{ filename: 'leadrun.css', content: css.toString('utf8') }],
      favicon: [{ filename: 'leadrun.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: favicon }],
    },
  });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => publicApi());
}

export default fp(apiDocs, { name: 'api-docs' });
