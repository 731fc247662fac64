// /api/v1/suppressions: the workspace's suppression list (DESIGN §15), the addresses and domains nothing is delivered
// to. Read with leads:read, changed with leads:write. The CSV import is a plugin context of its own (the body is read
// as bytes and parsed in the CPU pool, DESIGN §10); the export is sent as it is read.
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { FastifyError } from 'fastify';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import { cursorParam, linkNextPage } from '../../pagination.ts';
import {
  answer, authProblems, Cursor, dataOf, IdParam, Limit, listOf, problem, Suppression, SuppressionCreate, SuppressionImportSummary,
  writeProblems,
} from '../../../schemas/index.ts';
import { AppError } from '../../../domain/errors.ts';
import { CpuBudgetExceeded } from '../../../cpu/pool.ts';
import { SUPPRESSION_IMPORT_MAX_BYTES, SUPPRESSION_IMPORT_MAX_ROWS } from '../../../domain/suppressions/csv.ts';
import {
  createSuppression, deleteSuppression, exportSuppressions, importSuppressions, listSuppressions,
} from '../../../domain/suppressions/list.ts';

const tags = ['Suppressions'];
const MiB = 1024 * 1024;
const MEDIA_TYPES = 'Send the file as text/csv, or as application/json ({"entries": […]}), in UTF-8.';

/** The source an entry made by a request records: a person in the web UI, or a key. */
const sourceOf = (request: Parameters<typeof principalOf>[0]) => (principalOf(request).source === 'ui' ? 'ui' : 'api');

export default async function suppressionRoutes(app: AppInstance): Promise<void> {
  const { db, clock } = app.deps;

  app.get('/api/v1/suppressions', {
    config: { scope: 'leads:read' },
    schema: {
      operationId: 'listSuppressions',
      summary: 'List suppressions',
      description: 'Newest first. `q` finds entries whose address or domain holds it. The next page is linked by a `Link: <…>; rel="next"` header.',
      tags,
      querystring: Type.Object({
        q: Type.Optional(Type.String({ maxLength: 254, description: 'Part of an address or domain.' })),
        limit: Limit(50, 200),
        cursor: Type.Optional(Cursor),
      }),
      response: { 200: answer('A page of entries, newest first; `Link` names the next page.', listOf(Suppression, 200)), ...authProblems },
    },
  }, async (request, reply) => {
    const { q, limit } = request.query;
    const page = await listSuppressions(db, principalOf(request).workspaceId, { q, limit, cursor: cursorParam(request.query.cursor) });
    linkNextPage(reply, '/api/v1/suppressions', page.next, request.query);
    return { data: page.items };
  });

  app.post('/api/v1/suppressions', {
    config: { scope: 'leads:write', auditAction: 'suppression.created' },
    schema: {
      operationId: 'createSuppression',
      summary: 'Suppress an address or a domain',
      description: 'Nothing is delivered to it from now on: an approval with delivery to it is refused (409 `recipient_suppressed`), '
        + 'an e-mail or follow-up already queued to it ends `SUPPRESSED` unsent, and its sequences stop. An address or '
        + 'domain already on the list is answered with its entry as it is (200).',
      tags,
      body: SuppressionCreate,
      response: {
        201: answer('The entry, added; `Location` is its address.', dataOf(Suppression)),
        200: answer('The address or domain was on the list already: its entry.', dataOf(Suppression)),
        ...writeProblems,
        ...authProblems,
      },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const { entry, created } = await createSuppression(trx, principalOf(request).workspaceId, request.body, sourceOf(request), clock.now());
    return {
      status: created ? 201 : 200, body: { data: entry }, target: { type: 'suppression', id: entry.id },
      ...(created ? { location: `/api/v1/suppressions/${entry.id}` } : {}),
    };
  }));

  app.delete('/api/v1/suppressions/:id', {
    config: { scope: 'leads:write', auditAction: 'suppression.deleted' },
    schema: {
      operationId: 'deleteSuppression',
      summary: 'Remove a suppression',
      description: 'The address or domain may be written to again. Take care: an address that unsubscribed asked not to be.',
      tags, params: IdParam, response: { 204: Type.Null({ description: 'Removed.' }), ...authProblems },
    },
  }, (request, reply) => mutate(app.deps, request, reply, async (trx) => {
    const entry = await deleteSuppression(trx, principalOf(request).workspaceId, request.params.id);
    return { status: 204, body: null, target: { type: 'suppression', id: entry.id } };
  }));

  app.get('/api/v1/suppressions/export', {
    config: { scope: 'leads:read' },
    schema: {
      operationId: 'exportSuppressions',
      summary: 'Export suppressions as CSV',
      description: 'Every entry, oldest first, with the header `email,domain,reason,source,created_at`, which the import reads back. '
        + "A cell that a spreadsheet would take for a formula is written with a `'` before it.",
      tags,
      response: {
        200: {
          description: 'The CSV file (`Content-Disposition: attachment; filename="suppressions-YYYY-MM-DD.csv"`).',
          content: { 'text/csv': { schema: Type.String({ description: 'A header row, then a row per entry.' }) } },
        },
        ...authProblems,
      },
    },
  }, async (request, reply) => {
    const day = clock.now().toISOString().slice(0, 10);
    return reply.type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="suppressions-${day}.csv"`)
      .send(Readable.from(exportSuppressions(db, principalOf(request).workspaceId), { objectMode: false }));
  });

  await app.register(suppressionImportRoutes);
}

async function suppressionImportRoutes(app: AppInstance): Promise<void> {
  const { clock, cpu } = app.deps;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(['text/csv', 'application/json'], { parseAs: 'buffer', bodyLimit: SUPPRESSION_IMPORT_MAX_BYTES }, (_request, body, done) => done(null, body));
  const validatorOfApp = app.validatorCompiler;
  if (!validatorOfApp) throw new Error('the app sets its validator compiler before registering routes');
  app.setValidatorCompiler((route) => (route.httpPart === 'body' ? () => true : validatorOfApp(route)));
  app.setErrorHandler((error: FastifyError) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      throw new AppError('payload_too_large', `The file is larger than ${SUPPRESSION_IMPORT_MAX_BYTES / MiB} MiB, the most one import takes; split it.`);
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') throw new AppError('unsupported_media_type', MEDIA_TYPES);
    throw error;
  });

  app.post('/api/v1/suppressions/import', {
    bodyLimit: SUPPRESSION_IMPORT_MAX_BYTES,
    config: { scope: 'leads:write', auditAction: 'suppression.imported' },
    schema: {
      operationId: 'importSuppressions',
      summary: 'Import suppressions from CSV',
      description: `Up to ${SUPPRESSION_IMPORT_MAX_BYTES / MiB} MiB and ${SUPPRESSION_IMPORT_MAX_ROWS.toLocaleString('en')} rows, as text/csv in UTF-8 `
        + '(or as application/json, `{"entries": ["ada@example.com", "example.org"]}`). '
        + 'The column headed `email` (or `domain`) is read, or, without such a header, the first column: a cell with an @ '
        + 'is an address, one without a domain. Entries are added with reason `imported`; those on the list stay as they are.',
      tags,
      body: {
        content: {
          'text/csv': { schema: Type.String({ maxLength: SUPPRESSION_IMPORT_MAX_BYTES, description: 'A column headed `email` or `domain`, or one entry per row.' }) },
          'application/json': {
            schema: Type.Object({
              entries: Type.Array(Type.String({ maxLength: 254 }), { maxItems: SUPPRESSION_IMPORT_MAX_ROWS, description: 'Addresses and domains.' }),
            }, { additionalProperties: false }),
          },
        },
      },
      response: {
        200: answer('What the import did.', dataOf(SuppressionImportSummary)),
        ...writeProblems,
        ...authProblems,
        400: problem('More rows than one import takes, or a malformed query.'),
        413: problem(`The file is over ${SUPPRESSION_IMPORT_MAX_BYTES / MiB} MiB.`),
        415: problem('The body is neither text/csv nor application/json.'),
      },
    },
  }, async (request, reply) => {
    const body: unknown = request.body;
    if (!Buffer.isBuffer(body)) throw new AppError('unsupported_media_type', MEDIA_TYPES);
    const format = (request.headers['content-type'] ?? '').toLowerCase().startsWith('text/csv') ? 'csv' : 'json';
    const file = await cpu.run('readSuppressionFile', { format, bytes: new Uint8Array(body) }).catch((error: unknown) => {
      if (error instanceof CpuBudgetExceeded) throw new AppError('payload_too_large', 'The file took too long to read; split it into smaller ones.');
      throw error;
    });
    if (file.malformed) {
      throw new AppError('invalid_request', format === 'csv'
        ? 'The file is not CSV that can be read: look for an unclosed or stray quote.'
        : 'The JSON body must be {"entries": ["an address or domain", …]}.');
    }
    if (file.tooMany) throw new AppError('invalid_request', `The file has more than ${SUPPRESSION_IMPORT_MAX_ROWS.toLocaleString('en')} rows; split it.`);
    return mutate(app.deps, request, reply, async (trx) => {
      const summary = await importSuppressions(trx, principalOf(request).workspaceId, file, clock.now());
      return { status: 200, body: { data: summary }, target: null, details: summary };
    });
  });
}
