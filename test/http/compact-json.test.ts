// compactJson: PostgreSQL's JSON text with the spaces between tokens taken out, strings untouched.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compactJson } from '../../src/http/compact-json.ts';

/** JSON text of `value` with `gap()` between every pair of tokens: how any writer may space it. */
function spaced(value: unknown, gap: () => string): string {
  if (Array.isArray(value)) return `[${gap()}${value.map((v) => spaced(v, gap)).join(`${gap()},${gap()}`)}${gap()}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}${gap()}:${gap()}${spaced(v, gap)}`);
    return `{${gap()}${members.join(`${gap()},${gap()}`)}${gap()}}`;
  }
  return JSON.stringify(value);
}

describe('compactJson', () => {
  it('removes the spaces json_build_object, json_agg and jsonb write, and keeps those inside strings', () => {
    const pg = '{"id" : "r1", "steps" : [{"node" : "RESEARCH", "output" : {"facts": ["a : b", "c,  d"], "n": 1}}, \n {"node" : "WRITER", "output" : null}], "emailDraft" : {"body" : "Hi \\"Ada\\" :\\n\\tthanks \\\\ "}}';
    const compact = compactJson(pg);
    assert.equal(compact, JSON.stringify(JSON.parse(pg)));
    assert.doesNotMatch(compact.replace(/"(?:[^"\\]|\\.)*"/g, '""'), /\s/, 'no whitespace outside strings');
  });

  it('gives back compact text unchanged, and handles leading and trailing whitespace', () => {
    assert.equal(compactJson('{"a":[1,2,{"b":"x y"}]}'), '{"a":[1,2,{"b":"x y"}]}');
    assert.equal(compactJson(' \n{ "a" : 1 }\r\n\t'), '{"a":1}');
    assert.equal(compactJson('"  "'), '"  "');
    assert.equal(compactJson(''), '');
  });

  it('equals JSON.stringify(JSON.parse(text)) for any JSON value, however it is spaced', () => {
    const gap = fc.constantFrom('', ' ', '  ', '\n ', ' \n ', '\t', '\r\n');
    fc.assert(fc.property(fc.jsonValue(), fc.array(gap, { minLength: 1, maxLength: 16 }), (value, gaps) => {
      let i = 0;
      const text = spaced(value, () => gaps[i++ % gaps.length]!);
      assert.equal(compactJson(text), JSON.stringify(JSON.parse(text)));
    }), { numRuns: 500 });
  });
});
