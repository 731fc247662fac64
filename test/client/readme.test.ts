// packages/client/README.md's example, run from the client's sources (its import of '@leadrun/client' pointed at
// them) against a real leadrun on each database, as the packed package runs it in package.test.ts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { BACKENDS, startTestApp, type TestApp } from '../helpers.ts';
import { PROJECT_ROOT } from '../cli/support.ts';
import { readmeExample, startWebhookRunner } from './support.ts';

const run = promisify(execFile);
const SOURCE = path.join(PROJECT_ROOT, 'packages/client/src/index.ts');

for (const kind of BACKENDS) {
  describe(`the client's README example (${kind})`, () => {
    let t: TestApp;
    let runner: JobRunner;
    let folder: string;

    before(async () => {
      folder = await mkdtemp(path.join(os.tmpdir(), 'leadrun-client-readme-'));
      t = await startTestApp(kind, { config: { allowPrivateHosts: true } });
      await t.startWorker();
      runner = await startWebhookRunner(t);
    });
    after(async () => {
      await runner?.stop();
      await t?.close();
      if (folder) await rm(folder, { recursive: true, force: true });
    });

    it('runs as written: a lead, a run waited for and approved, its webhooks verified', async () => {
      const example = await readmeExample();
      assert.match(example, /from '@leadrun\/client';/);
      const script = path.join(folder, 'example.mts');
      await writeFile(script, example.replace("from '@leadrun/client';", `from ${JSON.stringify(SOURCE)};`));
      const workspace = await t.workspace('pro');
      const { key } = await t.key(workspace.id);
      const result = await run(process.execPath, [script], { env: { ...process.env, LEADRUN_URL: t.url, LEADRUN_API_KEY: key }, timeout: 120_000 });
      assert.match(result.stdout, /^lead: Ada Lovelace$/m);
      assert.match(result.stdout, /^draft: \S/m);
      assert.match(result.stdout, /^run: COMPLETED$/m);
      assert.match(result.stdout, /^webhooks: run\.awaiting_approval, run\.completed$/m);
      assert.match(result.stdout, /^again: 409 invalid_state$/m);
    });
  });
}
