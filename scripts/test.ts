// `npm test`: the project's own tests (on PostgreSQL and embedded PGlite), then the conformance suite of the
// interface contract when it is present beside the project (../shared/conformance).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const node = process.execPath;

function run(title: string, args: string[]): boolean {
  process.stdout.write(`\n== ${title}\n`);
  const result = spawnSync(node, args, { cwd: root, stdio: 'inherit', env: process.env });
  return result.status === 0;
}

const concurrency = process.env.TEST_CONCURRENCY ?? '2';
let ok = run('leadrun tests', ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=180000', 'test/**/*.test.ts']);

const conformance = path.resolve(root, process.env.CONFORMANCE_DIR ?? '../shared/conformance');
if (existsSync(conformance)) {
  const files = readdirSync(conformance).filter((f) => f.endsWith('.test.mjs')).map((f) => path.join(conformance, f));
  ok = run('conformance suite', ['--test', ...files]) && ok;
} else {
  process.stdout.write(`\n== conformance suite: not found at ${conformance}; skipped\n`);
}
process.exit(ok ? 0 : 1);
