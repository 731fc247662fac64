// Reading a lead import's CSV (src/domain/leads/import-file.ts, with csv-parse): quotes, line ends, empty lines and
// row numbers as a spreadsheet shows them, the delimiter, the byte order mark, rows wider than the header, the
// quotes it refuses and the row it names, the cap of 50,000 rows, and that no 10 MiB file takes it long. (The same
// through HTTP, with the database: test/http/lead-import.test.ts.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readImportFile, type ImportFileResult, type LeadRecord, type ReadImport, type RefusedImport } from '../../src/domain/leads/import-file.ts';
import { timedCpu } from '../support/thread-cpu.ts';

const MiB = 1024 * 1024;

function read(text: string | Buffer): ImportFileResult {
  return readImportFile({ format: 'csv', bytes: typeof text === 'string' ? Buffer.from(text) : text, map: {}, dedupe: false, userIds: [] });
}

function readOk(text: string): ReadImport {
  const result = read(text);
  assert.ok(result.ok, `refused: ${result.ok ? '' : result.message}`);
  return result;
}

function refusedWith(text: string | Buffer): RefusedImport {
  const result = read(text);
  assert.ok(!result.ok, 'the file is read, not refused');
  return result;
}

/** The leads a file gives, each as [name, company], in file order. */
const leadsOf = (result: ReadImport) => result.records.flatMap((batch) => JSON.parse(batch) as LeadRecord[])
  .map((lead) => [lead.name, lead.company_name ?? null]);
/** [row, field] of each error. */
const errorPlaces = (result: ReadImport) => result.errors.map((e) => [e.row, e.field]);

describe('reading a lead import CSV', () => {
  it('reads quoted cells holding delimiters, doubled quotes and line breaks; a cell over lines is one row', () => {
    const result = readOk('name,company\n"x, y","say ""hi"""\n"two\nlines",z\n,no name\n"""quoted""",""\n');
    assert.deepEqual(leadsOf(result), [['x, y', 'say "hi"'], ['two\nlines', 'z'], ['"quoted"', null]]);
    assert.deepEqual(errorPlaces(result), [[4, 'name']], 'the row after the two-line cell is row 4');
  });

  it('ends rows at CRLF, LF or CR, mixed in one file; passes empty lines over, counting them as rows, and a final line end', () => {
    const result = readOk('\r\n\nname,status\r\nAda,won\n\nBob,maybe\r\rCy,late\r\n\n\n');
    // A status that is not a lead's gives the default and a warning, not an error (issue 45).
    assert.deepEqual(leadsOf(result), [['Ada', null], ['Bob', null], ['Cy', null]]);
    assert.deepEqual(result.warnings.map((w) => [w.value, w.rows]), [['maybe', 1], ['late', 1]]);
    assert.equal(result.rows, 3);
    assert.deepEqual(leadsOf(readOk('name\r\n"a\r\nb"\r\n')), [['a\r\nb', null]]);
  });

  it('passes blank rows over (white space and delimiters only), and keeps their rows in the numbering', () => {
    const result = readOk('name,status\n,\n  ,\t\n;,\nAda,nope\n');
    assert.equal(result.rows, 2, 'the ";," row holds text: a name of ";"');
    assert.deepEqual(errorPlaces(result), []);
    assert.deepEqual(result.warnings.map((w) => [w.field, w.value]), [['status', 'nope']]);
  });

  it('takes the delimiter the header holds most outside quotes (comma, semicolon or tab), and strips a byte order mark', () => {
    for (const [text, delimiter] of [
      ['\uFEFFname;company\nAda;"A, Inc"\n', ';'],
      ['name\tcompany\nAda\t"A, Inc"\n', '\t'],
      ['name,company,"x;y;z;w"\nAda,"A, Inc",1\n', ','],
    ] as const) {
      const result = readOk(text);
      assert.deepEqual(leadsOf(result), [['Ada', 'A, Inc']], JSON.stringify(delimiter));
      assert.equal(result.columns![1]!.header, 'company');
    }
    assert.equal(readOk('\uFEFFname;company\nAda;A\n').columns![0]!.header, 'name', 'no byte order mark in the first header');
  });

  it('keeps empty cells, a trailing delimiter\'s included, and reads a row shorter than the header', () => {
    const result = readOk('name,company,\nAda,,\nBob\n');
    assert.deepEqual(result.columns!.map((c) => c.header), ['name', 'company', '']);
    assert.deepEqual(leadsOf(result), [['Ada', null], ['Bob', null]]);
    assert.equal(result.errorCount, 0);
  });

  it('refuses a quote it cannot read, naming the row: never closed, inside an unquoted cell, or followed by text', () => {
    const cases: Array<[string, RegExp, string]> = [
      ['name\nAda\n"Bob,\nx\n', /^Row 3 opens a quoted cell that is never closed/, 'row 3 opens a quote that is never closed'],
      ['name\n\n\n"x""', /^Row 4 opens a quoted cell that is never closed/, 'row 4 opens a quote that is never closed'],
      ['name\n"a\nb"\nc\n"d', /^Row 4 opens/, 'row 4 opens a quote that is never closed'],
      ['name,note\nAda,"fine"\nScreen,5" wide\n', /^Row 3 has a quote inside a cell that does not begin with one/, 'row 3 has a quote inside an unquoted cell'],
      ['name\nAda\n\n"Bob" Smith\n', /^Row 4 has text after the quote that closes a quoted cell/, 'row 4 has text after a closing quote'],
    ];
    for (const [text, detail, message] of cases) {
      const refused = refusedWith(text);
      assert.equal(refused.code, 'invalid_request', text);
      assert.match(refused.message, detail, text);
      assert.deepEqual(refused.errors, [{ field: '(body)', message }], text);
    }
  });

  it('refuses a header of more than 1,000 columns with their number, however many', () => {
    for (const columns of [1_001, 1_002, 100_000]) {
      const refused = refusedWith(`name,${Array.from({ length: columns - 1 }, (_, i) => `c${i}`).join(',')}\nAda\n`);
      assert.equal(refused.message, `The header row has ${columns.toLocaleString('en')} columns; an import reads at most 1,000.`);
      assert.deepEqual(refused.errors, [{ field: '(header)', message: 'has more than 1000 columns' }]);
    }
    assert.equal(readOk(`name,${Array.from({ length: 999 }, (_, i) => `c${i}`).join(',')}\nAda\n`).columns!.length, 1_000);
  });

  it('reports a row with more cells than the header has columns, counting them all, unless the extra cells are blank', () => {
    for (const cells of [3, 1_000, 1_001, 1_002, 1_500, 100_002]) {
      const result = readOk(`name,company\nAda,A,${Array.from({ length: cells - 2 }, (_, i) => (i % 2 ? ' ' : `x${i}`)).join(',')}\n`);
      assert.deepEqual(result.errors, [{ row: 2, field: '(row)', message: `has ${cells} cells, more than the 2 columns of the header row` }], String(cells));
    }
    for (const cells of [3, 1_001, 100_000]) {
      const result = readOk(`name,company\nAda,A${', '.repeat(cells - 2)}\n`);
      assert.deepEqual([result.errorCount, leadsOf(result)], [0, [['Ada', 'A']]], String(cells));
    }
    // Past its 1,000th cell a row is counted by its delimiters; a quote there cannot be read.
    const refused = refusedWith(`name\nAda${',x'.repeat(1_200)},"q"\n`);
    assert.match(refused.message, /^Row 2 has more than 1,000 cells, and a quote among those past them/);
    assert.deepEqual(refused.errors, [{ field: '(body)', message: 'row 2 has more than 1000 cells' }]);
    const header = refusedWith(`\nname${',c'.repeat(1_200)},"q"\nAda\n`);
    assert.match(header.message, /^Row 2 has more than 1,000 cells, and a quote among those past them/);
    assert.deepEqual(header.errors, [{ field: '(header)', message: 'has more than 1000 columns' }]);
  });

  it('stops at the 50,001st row under the header, blank or not; empty lines do not count', () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => `P${i}`);
    const full = readOk(`name\n${rows.join('\n\n')}\n\n`);
    assert.equal(full.rows, 50_000);
    assert.deepEqual(full.errors, []);
    for (const last of ['P50000', ',', ' ']) {
      const over = refusedWith(`name\n${rows.join('\n')}\n${last}\n`);
      assert.equal(over.code, 'payload_too_large', JSON.stringify(last));
      assert.match(over.message, /more than 50,000 rows/);
    }
  });

  it('refuses bytes that are not UTF-8, naming the line, and an empty file', () => {
    const latin1 = refusedWith(Buffer.concat([Buffer.from('name\n"Jos'), Buffer.from([0xe9]), Buffer.from('\n"\n')]));
    assert.match(latin1.message, /not UTF-8 text \(line 2 is not\)/);
    for (const empty of ['', '\uFEFF', ' \r\n\t\n']) assert.deepEqual(refusedWith(empty).errors, [{ field: '(body)', message: 'is empty' }]);
  });

  it('reads or refuses each hostile file of up to 10 MiB in a few seconds of CPU at most', (c) => {
    const columns = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`).join(',');
    const files: Array<[string, string, string]> = [
      ['10 MiB of short ragged rows', `name\n${',\n'.repeat(5 * MiB - 4)}`, 'payload_too_large'],
      ['ragged rows with text', `name\n${'x,\n'.repeat(3 * MiB)}`, 'payload_too_large'],
      ['a 10 MiB quoted cell', `name\n"${'x'.repeat(10 * MiB - 10)}"`, 'read'],
      ['a 10 MiB unquoted cell', `name\n${'x'.repeat(10 * MiB - 10)}`, 'read'],
      ['a header of 100,000 columns', `${columns(100_000)}\n${'a,'.repeat(99_999)}a\n`, 'invalid_request'],
      ['a header of ten million empty columns', ','.repeat(10 * MiB - 10), 'invalid_request'],
      ['a row of five million cells', `name\n${'x,'.repeat(5 * MiB - 4)}`, 'read'],
      ['1,000 columns, then rows of 1,000 empty cells', `name,${columns(999)}\n${`${','.repeat(999)}\n`.repeat(10_000)}`, 'read'],
      ['an unclosed quote at the start of 10 MiB', `name\n"${'x,y\n'.repeat(2.5 * MiB - 2)}`, 'invalid_request'],
      ['10 MiB of NUL bytes', `name\n${'\u0000'.repeat(10 * MiB - 10)}`, 'read'],
      ['ten million empty lines', `name\n${'\n'.repeat(10 * MiB - 10)}Ada\n`, 'read'],
      ['four million doubled quotes', `name\n"${'""'.repeat(4 * MiB)}"\n`, 'read'],
      ['a 4 MiB cell, then a million `"x"y`', `name\n"${'x'.repeat(4 * MiB)}"\n${'"x"y\n'.repeat(1_000_000)}`, 'invalid_request'],
    ];
    for (const [name, text, outcome] of files) {
      const bytes = Buffer.from(text);
      assert.ok(bytes.byteLength <= 10 * MiB, name);
      const began = performance.now();
      const { value: result, ms: cpuMs } = timedCpu(() => read(bytes));
      const ms = performance.now() - began;
      c.diagnostic(`${name}: ${Math.round(cpuMs)} ms of CPU, ${Math.round(ms)} ms`);
      assert.equal(result.ok ? 'read' : result.code, outcome, `${name}: ${result.ok ? '' : result.message}`);
      // This thread's CPU: a few hundred milliseconds, 1.0-1.4 s for ragged rows on a slow day of the machine, and
      // up to 2.1 s (of the whole process's) under a loaded run's sharing of the cores. The bound is far below what
      // csv-parse takes on ragged rows when not stopped at 50,001 (about 40 s for 10 MiB) or on `"x"y` rows with
      // relax_quotes (minutes). The time on the clock is shown, not held to a bound: it depends on what else the
      // machine does.
      assert.ok(cpuMs < 5_000, `${name}: ${Math.round(cpuMs)} ms of CPU`);
    }
  });
});
