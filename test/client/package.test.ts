// @leadrun/client as an integrator gets it: built, packed with `npm pack`, installed from the tarball into an empty
// folder (offline: it has no dependencies), and its README's example — importing '@leadrun/client' as written —
// type-checked under moduleResolution nodenext and bundler, then run with Node against a real leadrun.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { startTestApp, type TestApp } from '../helpers.ts';
import { PROJECT_ROOT } from '../cli/support.ts';
import { PACKAGE_DIR, readmeExample, startWebhookRunner } from './support.ts';

const run = promisify(execFile);
const BIN = path.join(PROJECT_ROOT, 'node_modules/.bin');
/** The type checker of `npm run typecheck` (docs/decisions/0002-tooling-versions.md). */
const TSC = path.join(PROJECT_ROOT, 'node_modules/typescript-7/bin/tsc');
const env = { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false' };

describe('@leadrun/client packed', () => {
  let folder: string;
  let t: TestApp;
  let runner: JobRunner;

  before(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'leadrun-client-'));
    t = await startTestApp('pglite', { config: { allowPrivateHosts: true } });
    await t.startWorker();
    runner = await startWebhookRunner(t);
  });
  after(async () => {
    await runner?.stop();
    await t?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('packs to dist and the README, installs offline, type-checks under nodenext and bundler, and runs its example', { timeout: 240_000 }, async () => {
    const tarballs = path.join(folder, 'tarballs');
    await mkdir(tarballs);
    // prepack builds dist/ with tsc.
    await run('npm', ['pack', '--pack-destination', tarballs, '--silent'], { cwd: PACKAGE_DIR, env });
    const [tarball] = (await readdir(tarballs)).filter((name) => name.endsWith('.tgz'));
    assert.ok(tarball, 'npm pack wrote a tarball');
    const listing = (await run('tar', ['-tzf', path.join(tarballs, tarball)])).stdout.split('\n').filter(Boolean).sort();
    assert.ok(listing.includes('package/dist/index.js') && listing.includes('package/dist/index.d.ts') && listing.includes('package/dist/schema.d.ts'), listing.join(' '));
    assert.ok(listing.includes('package/README.md'));
    assert.ok(!listing.some((name) => name.startsWith('package/src/') || name.startsWith('package/scripts/')), 'only what is used is shipped');

    const app = path.join(folder, 'app');
    await mkdir(app);
    await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'integration', private: true, type: 'module' }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', path.join(tarballs, tarball)], { cwd: app, env });
    const installed = JSON.parse(await readFile(path.join(app, 'node_modules/@leadrun/client/package.json'), 'utf8'));
    assert.equal(installed.name, '@leadrun/client');
    assert.equal(installed.dependencies, undefined, 'no runtime dependencies');

    await writeFile(path.join(app, 'index.ts'), await readmeExample());
    const compilerOptions = {
      target: 'es2022', lib: ['es2022', 'dom'], strict: true, noEmit: true, skipLibCheck: false, allowImportingTsExtensions: true,
      typeRoots: [path.join(PROJECT_ROOT, 'node_modules/@types')], types: ['node'],
    };
    for (const resolution of [{ module: 'nodenext', moduleResolution: 'nodenext' }, { module: 'esnext', moduleResolution: 'bundler' }]) {
      const config = `tsconfig.${resolution.moduleResolution}.json`;
      await writeFile(path.join(app, config), JSON.stringify({ compilerOptions: { ...compilerOptions, ...resolution }, files: ['index.ts'] }));
      const checked = await run(TSC, ['-p', config], { cwd: app, env }).catch((error: { stdout: string }) => error);
      assert.equal(checked.stdout, '', `tsc under ${resolution.moduleResolution}:\n${checked.stdout}`);
    }

    const workspace = await t.workspace('pro');
    const { key } = await t.key(workspace.id);
    const result = await run(process.execPath, ['index.ts'], {
      cwd: app, env: { ...env, LEADRUN_URL: t.url, LEADRUN_API_KEY: key }, timeout: 120_000,
    });
    assert.match(result.stdout, /^lead: Ada Lovelace$/m);
    assert.match(result.stdout, /^draft: \S/m);
    assert.match(result.stdout, /^run: COMPLETED$/m);
    assert.match(result.stdout, /^webhooks: run\.awaiting_approval, run\.completed$/m);
    assert.match(result.stdout, /^again: 409 invalid_state$/m);
  });
});

describe('@leadrun/client installed from this repository, as its README says until it is published', () => {
  it('builds with npm run build -w, and installs by its folder, offline, elsewhere', { timeout: 120_000 }, async () => {
    const readme = await readFile(path.join(PACKAGE_DIR, 'README.md'), 'utf8');
    assert.match(readme, /npm run build -w @leadrun\/client/);
    assert.match(readme, /npm install \/path\/to\/leadrun\/packages\/client/);
    await run('npm', ['run', 'build', '-w', '@leadrun/client', '--silent'], { cwd: PROJECT_ROOT, env });
    const app = await mkdtemp(path.join(os.tmpdir(), 'leadrun-client-folder-'));
    try {
      const manifest = { name: 'integration', private: true, type: 'module' };
      await writeFile(path.join(app, 'package.json'), JSON.stringify(manifest));
      await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', PACKAGE_DIR], { cwd: app, env });
      const script = "import { createClient } from '@leadrun/client'; "
        + "const c = createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'sk_x' }); "
        + "console.log(typeof c.leads.page, typeof c.runs.events);";
      await writeFile(path.join(app, 'index.mjs'), script);
      const result = await run(process.execPath, ['index.mjs'], { cwd: app, env });
      assert.equal(result.stdout.trim(), 'function function');
    } finally {
      await rm(app, { recursive: true, force: true });
    }
  });
});
