// The layers of src/ hold: the rules of .dependency-cruiser.cjs (domain imports neither http/ nor mail/, schemas/
// only TypeBox, no import cycle, type-only imports included) over the whole import graph. The test runs the same
// command a person runs (`npx depcruise src`), so that the two never disagree.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '..');
const DEPCRUISE = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');

describe('the layers of src/', () => {
  it('break none of the rules of .dependency-cruiser.cjs', { timeout: 120_000 }, async () => {
    const run = promisify(execFile)(process.execPath, [DEPCRUISE, 'src', '--output-type', 'err'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    const { stdout } = await run.catch((error: { stdout?: string; message: string }) => {
      assert.fail(`the import graph breaks the layers' rules:\n${error.stdout || error.message}`);
    });
    assert.match(stdout, /no dependency violations found \((\d{3,}) modules/);
  });
});
