// POST /api/v1/leads/import: a CSV or JSON file of leads. A plugin context of its own, because here, and only here,
// the body is read as raw bytes (text/csv, and application/json too), up to 10 MiB: the file is parsed and every row
// validated in the CPU pool, never on the event loop that answers HTTP (DESIGN §10). The rows are then written in one
// transaction with the import's audit entry.
import { Type } from 'typebox';
import type { FastifyError } from 'fastify';
import type { AppInstance } from '../../app-instance.ts';
import { principalOf } from '../../auth.ts';
import { mutate } from '../../mutation.ts';
import {
  answer, authProblems, LeadImportJson, LeadImportQuery, LeadImportResult, problem, writeProblems,
} from '../../../schemas/index.ts';
import { AppError } from '../../../domain/errors.ts';
import {
  importAuditDetails, importFile, importReader, readLeadImport, withoutLeadReads, writeLeadImport,
} from '../../../domain/leads/import.ts';
import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS } from '../../../domain/lead-import-format.ts';

const MiB = 1024 * 1024;
const MEDIA_TYPES = 'Send the file as text/csv, or as application/json ({"leads": […]}), in UTF-8.';

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/** The charset a Content-Type names, if any, lower case. */
function charsetOf(contentType: string | undefined): string | null {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '');
  return match?.[1]?.toLowerCase() ?? null;
}

export default async function leadImportRoutes(app: AppInstance): Promise<void> {
  const { db, clock, database, config } = app.deps;
  const read = importReader(app.deps.cpu);

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(['text/csv', 'application/json'], { parseAs: 'buffer', bodyLimit: IMPORT_MAX_BYTES }, (request, body, done) => {
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') {
      done(new AppError('unsupported_media_type', `The file must be UTF-8, not ${charset.slice(0, 40)}. ${MEDIA_TYPES}`), undefined);
      return;
    }
    done(null, body);
  });
  // The body is bytes until the CPU pool reads it: its schemas below describe it for the API document, and the JSON
  // rows are validated there against LeadCreate itself. Query strings are validated as on every route.
  const validatorOfApp = app.validatorCompiler;
  if (!validatorOfApp) throw new Error('the app sets its validator compiler before registering routes');
  app.setValidatorCompiler((route) => (route.httpPart === 'body' ? () => true : validatorOfApp(route)));
  // Fastify's own refusals of this route's body, in the words of this route; anything else goes on to the app's handler.
  app.setErrorHandler((error: FastifyError) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      throw new AppError('payload_too_large', `The file is larger than ${IMPORT_MAX_BYTES / MiB} MiB, the most one import takes; split it into several.`);
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') throw new AppError('unsupported_media_type', `The body is not a file of leads. ${MEDIA_TYPES}`);
    throw error;
  });

  app.post('/api/v1/leads/import', {
    bodyLimit: IMPORT_MAX_BYTES,
    config: { scope: 'leads:write', auditAction: 'lead.imported' },
    schema: {
      operationId: 'importLeads',
      summary: 'Import leads from a CSV or JSON file',
      description: `Up to ${IMPORT_MAX_BYTES / MiB} MiB and ${IMPORT_MAX_ROWS.toLocaleString('en')} rows of leads, as \`text/csv\` or as `
        + '`application/json` `{"leads": […]}`, in UTF-8. Every row is checked as `POST /api/v1/leads` checks a lead; the valid rows '
        + 'are written in one transaction and the others reported by row and field, and skipped. A CSV file has a header row; its '
        + 'delimiter (comma, semicolon or tab) is found from it, and its columns are matched by their headers, forgivingly (case, '
        + 'spaces, `_` and `-` do not matter): `name` or `full name` (or `first name` and `last name`), `email` or `e-mail`, `company`, '
        + '`website`, `status` (any case), `assignedToUserId`, and the usual headers of CRM exports (`Email 1`, `Work '
        + 'Email`, `Contact Email`, `Person - Email - Work`, `Contact Name`, `Person - Name`, `Account Name`, '
        + '`Organization - Name`, `Company Name for Emails`, Close\'s `Lead Name` as the company, `Website URL`; a '
        + '`Stage`, `Lifecycle Stage` or `Deal - Stage` column only if its values are statuses; `Display Name` only '
        + 'when mapped). Other columns are ignored, and listed in `columns`. `map` chooses the column of a field. A '
        + 'status that is not a lead status (another CRM\'s `Cold`) does not refuse the row: the lead gets the default '
        + 'status, each such value is listed once in `warnings`, and `statusMap` reads it as a status of your choice. '
        + 'A cell an export wrote with an apostrophe before `=`, `+`, `-`, `@`, a tab or a carriage return is read '
        + 'without it; a name and a company are kept as written, spaces and all, as `POST /api/v1/leads` keeps them. '
        + 'An empty cell gives no value: with `dedupe=email` it leaves the '
        + 'lead\'s value as it is. A row of '
        + `delimiters only (\`;;;\`, as spreadsheets save blank rows) is left out of the leads but counts towards the ${IMPORT_MAX_ROWS.toLocaleString('en')} `
        + 'rows; empty lines do not count. `leads:write` does not grant reading: to a key without `leads:read`, '
        + '`created` counts every row written and `updated` is 0, with `dedupe=email` too, so that the answer does not '
        + 'say which e-mails are leads already.',
      tags: ['Leads'],
      querystring: LeadImportQuery,
      body: {
        content: {
          'text/csv': { schema: Type.String({ maxLength: IMPORT_MAX_BYTES, description: 'A header row, then a row per lead.' }) },
          'application/json': { schema: LeadImportJson },
        },
      },
      response: {
        200: answer('What the import did (with `dryRun`, would do): its counts, and what is wrong with each skipped '
          + 'row. Rows that fail validation are reported here, not refused.', LeadImportResult),
        ...writeProblems,
        ...authProblems,
        413: problem(`The file is over ${IMPORT_MAX_BYTES / MiB} MiB or ${IMPORT_MAX_ROWS.toLocaleString('en')} rows, or took too long to read.`),
        415: problem('The body is neither text/csv nor application/json, or not in UTF-8.'),
      },
    },
  }, async (request, reply) => {
    const { workspaceId, scopes } = principalOf(request);
    const body: unknown = request.body;
    // Only a request with no body at all, and no Content-Type, comes this far without one.
    if (!Buffer.isBuffer(body)) throw new AppError('unsupported_media_type', `The request has no file. ${MEDIA_TYPES}`);
    const format = mediaType(request.headers['content-type']) === 'text/csv' ? 'csv' : 'json';
    const { dedupe, dryRun = false, map = [], statusMap = [] } = request.query;
    const file = importFile(format, body, map, statusMap);
    const options = { dedupe: dedupe ?? null, dryRun };
    const rows = await readLeadImport(db, workspaceId, file, options, read);
    // The embedded database's statistics brought up to date first (src/db/statistics.ts), so that the import's
    // statements are planned for the tables as they are; a no-op on PostgreSQL, whose autovacuum does it.
    await database.refreshStatistics();
    return mutate(app.deps, request, reply, async (trx) => {
      const result = await writeLeadImport(trx, workspaceId, rows, options, clock, config.importWriteMs);
      // leads:write does not grant reading: created and updated together would say which e-mails are leads.
      const body = scopes.includes('leads:read') ? result : withoutLeadReads(result);
      return { status: 200, body, target: null, details: importAuditDetails(file, options, result) };
    });
  });
}
