// TypeBox and Kysely load from the bundles `npm install` made of them (scripts/bundle-deps.ts, src/bundled-deps.ts):
// the same exports and the same behaviour as the installed packages, in a leadrun process; and never a bundle of
// another version than the one installed.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { BUNDLED_PACKAGES, bundledEntries, type BundleManifest } from '../../src/bundled-deps.ts';
import { BACKENDS, createMigratedPostgresDatabase } from '../helpers.ts';
import { runModuleScript } from '../support/node-eval.ts';
import { PROJECT_ROOT, runLeadrun } from './support.ts';

const nodeModules = pathToFileURL(path.join(PROJECT_ROOT, 'node_modules/'));
const bundlesDir = new URL('.cache/leadrun-bundles/', nodeModules);
const HOOK = path.join(PROJECT_ROOT, 'src/bundled-deps.ts');

/**
 * What a process makes of each package: where each entry file resolves to, the names each exports, and a schema
 * checked and a query compiled across two entry points (which must then share the package's state).
 */
const probeScript = (manifest: BundleManifest) => `
const manifest = ${JSON.stringify(manifest)};
const nodeModules = ${JSON.stringify(nodeModules.href)};
const out = { resolved: {}, exports: {} };
for (const [name, { entries }] of Object.entries(manifest)) {
  for (const file of Object.keys(entries)) {
    const url = new URL(name + '/' + file, nodeModules).href;
    out.resolved[url] = import.meta.resolve(url);
    out.exports[name + '/' + file] = Object.keys(await import(url)).sort();
  }
}
const { Type } = await import('typebox');
const { Compile } = await import('typebox/compile');
const check = Compile(Type.Object({ n: Type.Integer({ minimum: 1 }) }));
out.typebox = [check.Check({ n: 2 }), check.Check({ n: 0 }), check.Check({ n: 'x' })];
const k = await import('kysely');
const { jsonArrayFrom } = await import('kysely/helpers/postgres');
const db = new k.Kysely({ dialect: {
  createAdapter: () => new k.PostgresAdapter(), createDriver: () => new k.DummyDriver(),
  createIntrospector: (db) => new k.PostgresIntrospector(db), createQueryCompiler: () => new k.PostgresQueryCompiler(),
} });
out.kysely = db.selectFrom('leads').select((eb) => ['id', jsonArrayFrom(eb.selectFrom('calls').select('calls.id').whereRef('calls.lead_id', '=', 'leads.id')).as('calls')])
  .where('name', 'ilike', '%a%').orderBy('created_at', 'desc').limit(5).compile().sql;
console.log(JSON.stringify(out));
`;

async function probe(manifest: BundleManifest, withBundles: boolean) {
  const stdout = await runModuleScript(probeScript(manifest), withBundles ? ['--import', HOOK] : []);
  return JSON.parse(stdout) as { resolved: Record<string, string>; exports: Record<string, string[]>; typebox: boolean[]; kysely: string };
}

describe('TypeBox and Kysely bundled', () => {
  let manifest: BundleManifest;

  before(async () => {
    manifest = JSON.parse(await readFile(new URL('manifest.json', bundlesDir), 'utf8')) as BundleManifest;
  });

  it('npm install bundles every entry point of the installed versions', async () => {
    assert.deepEqual(Object.keys(manifest).sort(), [...BUNDLED_PACKAGES].sort());
    for (const name of BUNDLED_PACKAGES) {
      const pkg = JSON.parse(await readFile(new URL(`${name}/package.json`, nodeModules), 'utf8')) as { version: string; exports: Record<string, unknown> };
      assert.equal(manifest[name]!.version, pkg.version, `${name}'s bundle is of the installed version`);
      const subpaths = Object.keys(pkg.exports).filter((subpath) => subpath !== './package.json');
      assert.equal(Object.keys(manifest[name]!.entries).length, subpaths.length, `every entry point of ${name} is bundled`);
    }
    assert.equal(bundledEntries(nodeModules).size, Object.values(manifest).reduce((n, p) => n + Object.keys(p.entries).length, 0));
  });

  it('loads the bundles in the packages\' place, with the same exports and the same behaviour', async () => {
    const [installed, bundled] = await Promise.all([probe(manifest, false), probe(manifest, true)]);
    for (const [from, to] of Object.entries(bundled.resolved)) {
      assert.ok(to.startsWith(bundlesDir.href), `${from} loads from its bundle, not ${to}`);
      assert.equal(installed.resolved[from], from, 'without the hook, the installed file');
    }
    assert.deepEqual(bundled.exports, installed.exports);
    assert.deepEqual(bundled.typebox, [true, false, false]);
    assert.deepEqual(bundled.typebox, installed.typebox);
    assert.equal(bundled.kysely, installed.kysely);
    assert.match(bundled.kysely, /^select "id", \(select coalesce\(json_agg/);
  });

  it('is what a leadrun command runs on', { skip: !BACKENDS.includes('postgres') && 'needs PostgreSQL' }, async () => {
    // A load hook of the test's own, ahead of leadrun's, counts where Kysely's modules come from.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'leadrun-bundles-'));
    const database = await createMigratedPostgresDatabase();
    try {
      const counter = path.join(dir, 'count.mjs');
      await writeFile(counter, `import { registerHooks } from 'node:module';
const seen = { installed: 0, bundled: 0 };
registerHooks({ load(url, context, next) {
  if (url.includes('/node_modules/kysely/') || url.includes('/node_modules/typebox/')) seen.installed++;
  if (url.includes('/leadrun-bundles/')) seen.bundled++;
  return next(url, context);
} });
process.on('exit', () => process.stderr.write('LOADED ' + JSON.stringify(seen) + '\\n'));
`);
      const done = await runLeadrun(['workspace', 'list', '--json'], { DATABASE_URL: database.url, NODE_OPTIONS: `--import=${counter}` }, { process: true });
      assert.equal(done.code, 0, done.stderr);
      const seen = JSON.parse(/LOADED (.*)/.exec(done.stderr)![1]!) as { installed: number; bundled: number };
      assert.equal(seen.installed, 0, 'no module of the installed Kysely or TypeBox');
      assert.ok(seen.bundled > 0, 'Kysely from its bundle');
    } finally {
      await rm(dir, { recursive: true, force: true });
      await database.drop();
    }
  });

  describe('a bundle stands in only for the version it was made of', () => {
    let dir: string;
    let modules: URL;

    before(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'leadrun-bundles-'));
      modules = pathToFileURL(`${dir}/`);
      await mkdir(path.join(dir, 'kysely'), { recursive: true });
      await mkdir(path.join(dir, 'typebox'), { recursive: true });
      await mkdir(path.join(dir, '.cache/leadrun-bundles'), { recursive: true });
      await writeFile(path.join(dir, 'kysely/package.json'), JSON.stringify({ version: '0.29.9' }));
      await writeFile(path.join(dir, 'typebox/package.json'), JSON.stringify({ version: '1.5.0' }));
    });
    after(() => rm(dir, { recursive: true, force: true }));

    const writeManifest = (m: unknown) => writeFile(path.join(dir, '.cache/leadrun-bundles/manifest.json'), typeof m === 'string' ? m : JSON.stringify(m));

    it('maps the entry files of a package whose installed version is the bundle\'s, and no other', async () => {
      await writeManifest({
        kysely: { version: '0.29.9', entries: { 'dist/index.js': 'kysely/index.mjs' } },
        typebox: { version: '1.4.3', entries: { 'build/index.mjs': 'typebox/index.mjs' } },
        pg: { version: '8.0.0', entries: { 'lib/index.js': 'pg/index.mjs' } },
      });
      assert.deepEqual([...bundledEntries(modules)], [
        [new URL('kysely/dist/index.js', modules).href, new URL('.cache/leadrun-bundles/kysely/index.mjs', modules).href],
      ]);
    });

    it('maps nothing without a readable manifest', async () => {
      await writeManifest('{ not json');
      assert.equal(bundledEntries(modules).size, 0);
      await rm(path.join(dir, '.cache/leadrun-bundles/manifest.json'));
      assert.equal(bundledEntries(modules).size, 0);
    });
  });
});
