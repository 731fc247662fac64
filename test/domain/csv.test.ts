// The CSV reader of lead imports (src/domain/csv.ts): what it makes of quotes, line ends and ragged rows, and that
// it stays linear on the inputs that make other readers slow.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CsvQuoteNotClosed, readCsvRecords, type CsvRecord } from '../../src/domain/csv.ts';

function records(text: string, delimiter = ',', maxCells = 1000): Array<[number, string[]]> {
  const out: Array<[number, string[]]> = [];
  readCsvRecords(text, delimiter, maxCells, (r) => out.push([r.row, r.cells]));
  return out;
}

describe('readCsvRecords', () => {
  it('reads cells, quoted cells with delimiters, doubled quotes and line breaks, and numbers records as rows', () => {
    assert.deepEqual(records('a,b\n"x, y","say ""hi"""\n"two\nlines",z\n'), [
      [1, ['a', 'b']], [2, ['x, y', 'say "hi"']], [3, ['two\nlines', 'z']],
    ]);
  });

  it('ends records at CRLF, LF or CR, mixed; an empty line is a record of one empty cell; a final line end starts none', () => {
    assert.deepEqual(records('a\r\nb\nc\rd'), [[1, ['a']], [2, ['b']], [3, ['c']], [4, ['d']]]);
    assert.deepEqual(records('a\n\nb\r\n\r\n'), [[1, ['a']], [2, ['']], [3, ['b']], [4, ['']]]);
    assert.deepEqual(records('"a\r\nb"\r\nc'), [[1, ['a\r\nb']], [2, ['c']]]);
    assert.deepEqual(records(''), []);
    assert.deepEqual(records('\n'), [[1, ['']]]);
  });

  it('keeps empty cells, a trailing delimiter included, and reads semicolons and tabs', () => {
    assert.deepEqual(records('a,,c,\n,\n'), [[1, ['a', '', 'c', '']], [2, ['', '']]]);
    assert.deepEqual(records('a,b,'), [[1, ['a', 'b', '']]]);
    assert.deepEqual(records('a;"b;c";d,e', ';'), [[1, ['a', 'b;c', 'd,e']]]);
    assert.deepEqual(records('a\t"b\tc"', '\t'), [[1, ['a', 'b\tc']]]);
  });

  it('forgives quotes as spreadsheets do: literal inside an unquoted cell, text after a closing quote kept', () => {
    assert.deepEqual(records('5" screen,ab"c\n"x"y,z'), [[1, ['5" screen', 'ab"c']], [2, ['xy', 'z']]]);
    assert.deepEqual(records('""'), [[1, ['']]]);
    assert.deepEqual(records('""""'), [[1, ['"']]]);
  });

  it('throws CsvQuoteNotClosed naming the row a never-closed quote opens on', () => {
    assert.throws(() => records('a\nb\n"c,d\ne,f\n'), (error: unknown) => error instanceof CsvQuoteNotClosed && error.row === 3);
    assert.throws(() => records('"a""'), (error: unknown) => error instanceof CsvQuoteNotClosed && error.row === 1);
  });

  it('keeps only maxCells cells of a record, counting the rest and telling whether any held text', () => {
    const seen: CsvRecord[] = [];
    readCsvRecords('a,b,c,d\n1,2, , \n1,2,,x\n', ',', 2, (r) => seen.push(r));
    assert.deepEqual(seen.map((r) => [r.cells, r.width, r.droppedText]), [[['a', 'b'], 4, true], [['1', '2'], 4, false], [['1', '2'], 4, true]]);
  });

  it('reads 10 MiB of ragged rows, delimiters, quotes or line ends in time linear in the text', () => {
    const MiB = 1024 * 1024;
    const inputs: Record<string, string> = {
      'ragged rows': `a\n${',\n'.repeat(5 * MiB)}`,
      'one row of ten million cells': ','.repeat(10 * MiB),
      'line ends': '\n'.repeat(10 * MiB),
      'doubled quotes': `"${'""'.repeat(5 * MiB)}"`,
      'one long cell': 'x'.repeat(10 * MiB),
      'quotes inside cells': 'a"'.repeat(5 * MiB),
    };
    for (const [name, text] of Object.entries(inputs)) {
      const began = performance.now();
      let count = 0;
      readCsvRecords(text, ',', 1001, () => { count += 1; });
      const ms = performance.now() - began;
      assert.ok(count > 0, name);
      // Well under a second on a laptop; the bound leaves room for a loaded machine, and is far below what a
      // quadratic reader (or csv-parse on ragged rows, about 40 s) takes on the same text.
      assert.ok(ms < 5_000, `${name}: ${Math.round(ms)} ms`);
    }
  });
});
