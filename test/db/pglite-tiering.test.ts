// Opening the embedded database leaves PGlite's WebAssembly in V8's baseline code (src/db/database.ts): with V8's
// default tiering budget, a start compiled PostgreSQL's largest functions again with the optimizing compiler, its SQL
// parser (105 kB of code) for 2 s of CPU and 600 MB of memory. Checked in a new process, which prints each function V8
// compiles, with which compiler and its size. Node's own WebAssembly (the type stripping of the .ts files the process
// loads, when they are not in the compile cache) has small functions compiled so, 6.6 kB at most: left out by size.
// bin/leadrun starts Node with the setting, as `npm test` does (src/db/wasm-tiering.ts).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { WASM_TIERING_FLAG } from '../../src/db/wasm-tiering.ts';
import { LEADRUN_BIN, tempDir } from '../cli/support.ts';
import { projectModule, runModuleScript } from '../support/node-eval.ts';

/** Bytes of a function's WebAssembly: PostgreSQL's start runs several larger; the type stripping compiled none so. */
const LARGE = 10_000;

describe('the embedded database at its start', () => {
  it('opens, checks its migrations and answers with no large function compiled by the optimizing compiler', async (t) => {
    // A DATA_DIR migrated already, as a server that has started before opens it.
    const dataDir = await tempDir('leadrun-tiering-', { migrated: true });
    t.after(() => dataDir.remove());
    const script = `
const { openPGliteInstance, pgliteDatabase } = await import(${JSON.stringify(projectModule('src/db/database.ts'))});
const database = pgliteDatabase(await openPGliteInstance({ databaseUrl: null, dataDir: ${JSON.stringify(dataDir.path)} }));
await database.migrate();
await database.db.selectFrom('workspaces').selectAll().execute();
await database.db.selectFrom('leads').select(({ fn }) => fn.countAll().as('n')).execute();
await database.close();`;
    const stdout = await runModuleScript(script, ['--trace-wasm-compilation-times']);
    const compiled = stdout.split('\n').filter((line) => line.startsWith('Compiled function '));
    assert.ok(compiled.some((line) => line.includes(' using Liftoff,')), 'the trace shows the baseline compiler at work');
    const size = (line: string) => Number(/ bodysize (\d+)/.exec(line)?.[1]);
    assert.ok(compiled.some((line) => size(line) > LARGE), 'the start ran functions of PostgreSQL larger than 10 kB');
    assert.deepEqual(compiled.filter((line) => line.includes(' using TurboFan,') && size(line) > LARGE), []);
  });

  it('is the setting bin/leadrun starts Node with, so that it never changes in the middle of a process', () => {
    const script = readFileSync(LEADRUN_BIN, 'utf8');
    const value = WASM_TIERING_FLAG.slice(WASM_TIERING_FLAG.indexOf('=') + 1);
    assert.match(script, new RegExp(`^wasm="--wasm-tiering-budget=${value}"$`, 'm'));
    assert.match(script, /^exec "\$node" .*\$wasm /m);
  });
});
