// What the import page reads of a file (web/src/lib/leadImport.ts) agrees with what the server's import reads of it
// (src/domain/leads/import-file.ts, called here in-process): the preview's rows and their numbers, the column mapping
// the page shows and sends, the bad rows picked by the numbers the server reports, and the file of bad rows.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { readCsvRecords } from '../../src/domain/csv-records.ts';
import { readImportFile, type ReadImport } from '../../src/domain/leads/import-file.ts';
import { IMPORT_FIELDS, parseColumnMap, type ImportField } from '../../src/domain/lead-import-format.ts';
import {
  badRowsFile, chooseField, formatBytes, formatOf, groupByRow, initialFields, isUtf8Start, mapEntries, mappingProblem,
  matchColumns, pickRows, previewCsv, refusalOf,
} from '../../web/src/lib/leadImport.ts';

const encoder = new TextEncoder();

/** The server's reading of a CSV file, without a database: what POST /api/v1/leads/import?dryRun=true counts. */
function serverReads(text: string, map: string[] = []): ReadImport {
  const parsed = parseColumnMap(map);
  assert.deepEqual(parsed.problems, []);
  const result = readImportFile({ format: 'csv', bytes: encoder.encode(text), map: parsed.map, dedupe: false, userIds: [] });
  assert.ok(result.ok, `the server reads the file: ${JSON.stringify(result)}`);
  return result;
}

/** A spreadsheet's export: BOM, semicolons, CRLF, a quoted cell holding `;` and a line break, a blank row, bad rows. */
const SHEET = [
  '\uFEFFFull Name;E-mail;Company;Notes', // 1
  'Ada Lovelace;ada@analytical.example;"Analytical; Engines";"first line\r\nsecond; line"', // 2: one row over two lines
  ';nobody@example.com;No Name Inc;', // 3: no name
  ';;;', // 4: blank
  'Broken Email;not-an-email;Acme;"say ""hi"""', // 5
  'Linus;linus@example.com;;', // 6
].join('\r\n');
/** The text as the page decodes it (the decoder drops the byte order mark, as the server's does). */
const decoded = (text: string) => new TextDecoder().decode(encoder.encode(text));

describe('the import page reads a file as the server does', () => {
  it('previews the header and the first rows, numbered as the server numbers them, blank rows left out', () => {
    const preview = previewCsv(decoded(SHEET), true);
    assert.equal(preview.delimiter, ';');
    assert.deepEqual(preview.headers, ['Full Name', 'E-mail', 'Company', 'Notes']);
    assert.deepEqual(preview.rows.map((r) => r.row), [2, 3, 5, 6]);
    assert.deepEqual(preview.rows[0]!.cells, ['Ada Lovelace', 'ada@analytical.example', 'Analytical; Engines', 'first line\r\nsecond; line']);
    assert.equal(preview.rows[2]!.cells[3], 'say "hi"');
    assert.equal(preview.more, false);
    assert.equal(preview.problem, null);
    // The server's row numbers of the same file.
    assert.deepEqual(serverReads(SHEET).errors.map((e) => [e.row, e.field]), [[3, 'name'], [5, 'email']]);
  });

  it('shows at most the rows asked for, and says there are more', () => {
    const preview = previewCsv(decoded(SHEET), true, 2);
    assert.deepEqual(preview.rows.map((r) => r.row), [2, 3]);
    assert.equal(preview.more, true);
  });

  it('leaves out the record the cut of the file\'s start may have shortened, even inside a quoted cell', () => {
    const start = decoded(SHEET).slice(0, SHEET.indexOf('No Name'));
    const cut = previewCsv(start, false);
    assert.deepEqual(cut.rows.map((r) => r.row), [2], 'row 3 is cut and not shown');
    assert.equal(cut.more, true);
    const insideQuote = decoded(SHEET).slice(0, SHEET.indexOf('second;'));
    const quoted = previewCsv(insideQuote, false);
    assert.deepEqual(quoted.rows, []);
    assert.deepEqual(quoted.headers, ['Full Name', 'E-mail', 'Company', 'Notes']);
    assert.equal(quoted.problem, null, 'a quote the cut leaves open is not the file\'s fault');
    // In the whole file, an unclosed quote is what the server refuses it for.
    assert.match(previewCsv('name\n"Ada\n', true).problem ?? '', /Row 2 opens a quoted cell that is never closed/);
  });

  it('finds the same delimiter as the server: commas, semicolons or tabs, whichever the header holds most', () => {
    for (const [text, delimiter] of [['a,b;c,d\n1,2,3,4', ','], ['"x,y";b;c\n1;2;3', ';'], ['name\temail\nA\ta@b.co', '\t'], ['name\nAda', ',']] as const) {
      assert.equal(previewCsv(text, true).delimiter, delimiter, text);
    }
  });

  it('prefills the mapping as the server matches headers, and the mapping it sends is the one the server applies', () => {
    const headers = ['Full Name', 'E-mail', 'Company', 'Notes', 'homepage', 'Stage', 'E_Mail'];
    const { fields } = matchColumns(headers);
    assert.deepEqual(fields, ['name', 'email', 'companyName', null, 'companyWebsite', 'status', null], 'the first of two e-mail columns wins');
    const text = `${headers.join(',')}\nAda,ada@example.com,Acme,,https://acme.example,won,other@example.com\n`;
    assert.deepEqual(serverReads(text).columns!.map((c) => c.field), fields, 'without a mapping the server reads the same');

    // The person reads the second e-mail column instead, and the notes as the company.
    let chosen = chooseField(fields, 6, 'email');
    chosen = chooseField(chosen, 3, 'companyName');
    assert.deepEqual(chosen, ['name', null, null, 'companyName', 'companyWebsite', 'status', 'email'], 'a field chosen again leaves its old column');
    assert.equal(mappingProblem(headers, chosen), null);
    const entries = mapEntries(headers, chosen);
    assert.deepEqual(entries, IMPORT_FIELDS.map((f) => `${f}:${({ name: 'Full Name', companyName: 'Notes', companyWebsite: 'homepage', status: 'Stage', email: 'E_Mail' } as Partial<Record<ImportField, string>>)[f] ?? ''}`));
    const read = serverReads(text, entries);
    assert.deepEqual(read.columns!.map((c) => c.field), chosen);
    assert.equal(read.errors.length, 0);
  });

  it('shows a Stage column ignored when none of its values is a status, as the server reads it', () => {
    const statuses = ['DISCOVERY', 'CONTACTED', 'QUALIFIED', 'PROPOSAL', 'WON', 'LOST'];
    for (const [stages, read] of [[['Cold', 'Replied'], null], [['Cold', 'won'], 'status']] as const) {
      const text = `Name,Stage\nAda,${stages[0]}\nBo,${stages[1]}\n`;
      const fields = initialFields(previewCsv(text, true), statuses);
      assert.deepEqual(fields, ['name', read]);
      assert.deepEqual(serverReads(text).columns!.map((c) => c.field), fields);
    }
  });

  it("prefills the columns of HubSpot's, Pipedrive's, Zoho's and Close's exports as the server reads them", () => {
    const statuses = ['DISCOVERY', 'CONTACTED', 'QUALIFIED', 'PROPOSAL', 'WON', 'LOST'];
    for (const name of ['hubspot-contacts', 'pipedrive-deals', 'zoho-leads', 'close-leads']) {
      const text = readFileSync(new URL(`../http/fixtures/${name}.csv`, import.meta.url), 'utf8');
      const fields = initialFields(previewCsv(decoded(text), true), statuses);
      assert.ok(fields.includes('email') && fields.includes('companyName') && fields.includes('status'), name);
      assert.deepEqual(serverReads(text).columns!.map((c) => c.field), fields, name);
    }
  });

  it('says why a mapping cannot be sent as shown: two columns of one header, a column with no header, no name', () => {
    const twice = ['Name', 'Email', 'Email'];
    assert.match(mappingProblem(twice, ['name', null, 'email']) ?? '', /Two columns are named “Email”: only the first of them can be read as E-mail/);
    assert.equal(mappingProblem(twice, ['name', 'email', null]), null);
    assert.match(mappingProblem(['Name', ''], ['name', 'email']) ?? '', /Column 2 has no header/);
    assert.match(mappingProblem(['Name', 'Email'], [null, 'email']) ?? '', /Choose the column that holds each lead’s name/);
    assert.equal(mappingProblem(['First', 'Surname'], ['firstName', 'lastName']), null, 'first and last names make a name');
    assert.match(mappingProblem(['Name', 'x'.repeat(300)], ['name', 'email']) ?? '', /too long/);
  });

  it('picks the rows the server reports as bad, and writes them back as a file the server reads the same', () => {
    const errors = serverReads(SHEET).errors;
    const bad = groupByRow(errors).map((b) => b.row);
    assert.deepEqual(bad, [3, 5]);
    const rows = pickRows(decoded(SHEET), 'csv', new Set(bad));
    assert.equal(rows.format, 'csv');
    assert.ok(rows.format === 'csv');
    assert.deepEqual(rows.header, ['Full Name', 'E-mail', 'Company', 'Notes']);
    assert.deepEqual(rows.rows.get(3), ['', 'nobody@example.com', 'No Name Inc', '']);
    assert.deepEqual(rows.rows.get(5), ['Broken Email', 'not-an-email', 'Acme', 'say "hi"']);

    const file = badRowsFile(rows, bad);
    assert.equal(file.extension, 'csv');
    assert.ok(file.text.startsWith('\uFEFFFull Name;E-mail;Company;Notes\r\n'));
    assert.equal(file.text, '\uFEFFFull Name;E-mail;Company;Notes\r\n;nobody@example.com;No Name Inc;\r\nBroken Email;not-an-email;Acme;"say ""hi"""\r\n');
    const again = serverReads(file.text);
    assert.deepEqual(again.errors.map((e) => [e.row, e.field, e.message]), errors.map((e, i) => [i + 2, e.field, e.message]));
  });

  it('quotes a written cell that holds the delimiter, a quote or a line end, and nothing else', () => {
    const rows = { format: 'csv' as const, delimiter: ',' as const, header: ['name', 'notes'], rows: new Map([[2, ['A, B', 'x;y\nz']], [3, ['plain', '']]]) };
    const { text } = badRowsFile(rows, [2, 3]);
    assert.equal(text, '\uFEFFname,notes\r\n"A, B","x;y\nz"\r\nplain,\r\n');
    const records: string[][] = [];
    readCsvRecords(parse, text.slice(1), ',', (r) => records.push(r.cells));
    assert.deepEqual(records, [['name', 'notes'], ['A, B', 'x;y\nz'], ['plain', '']]);
  });

  it('picks JSON leads by index and writes them back as {"leads": […]}', () => {
    const text = JSON.stringify({ leads: [{ name: 'Ada' }, { name: '' }, { name: 'Linus', status: 'maybe' }] });
    const rows = pickRows(text, 'json', new Set([1, 2]));
    const file = badRowsFile(rows, [1, 2]);
    assert.equal(file.extension, 'json');
    assert.deepEqual(JSON.parse(file.text), { leads: [{ name: '' }, { name: 'Linus', status: 'maybe' }] });
  });
});

describe('the import page refuses a file before sending it', () => {
  it('takes .csv and .json files up to 10 MiB and says why it takes no other', () => {
    assert.equal(formatOf({ name: 'Leads.CSV', type: '' }), 'csv');
    assert.equal(formatOf({ name: 'leads.json', type: 'application/json' }), 'json');
    assert.equal(formatOf({ name: 'leads.xlsx', type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }), null);
    assert.equal(refusalOf({ name: 'leads.csv', type: 'text/csv', size: 10 * 1024 * 1024 }), null);
    assert.equal(refusalOf({ name: 'leads.csv', type: 'text/csv', size: 10 * 1024 * 1024 + 1 }),
      '“leads.csv” is 10,485,761 bytes; an import takes at most 10 MiB. Split it into several files.');
    assert.match(refusalOf({ name: 'big.json', type: '', size: 12 * 1024 * 1024 }) ?? '', /^“big.json” is 12 MiB; an import takes at most 10 MiB/);
    assert.match(refusalOf({ name: 'leads.xlsx', type: '', size: 10 }) ?? '', /neither a CSV nor a JSON file/);
    assert.equal(refusalOf({ name: 'leads.csv', type: 'text/csv', size: 0 }), '“leads.csv” is empty.');
    assert.deepEqual([formatBytes(512), formatBytes(48_200), formatBytes(3 * 1024 * 1024)], ['512 bytes', '47.1 KiB', '3 MiB']);
  });

  it('tells UTF-8 from other text, even when the preview cuts a character in two', () => {
    const bytes = encoder.encode('name\nZoë');
    assert.equal(isUtf8Start(bytes.slice(0, bytes.length - 1)), true, 'the start of "ë" is not an error');
    assert.equal(isUtf8Start(new Uint8Array([0x6e, 0x61, 0x6d, 0x65, 0x0a, 0x5a, 0x6f, 0xeb, 0x0a])), false, 'Latin-1 "ë" is');
  });
});
