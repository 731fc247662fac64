// `npm install` (its prepare script): TypeBox and Kysely, each bundled into a few files, for src/bundled-deps.ts to
// load in their place. Installed, they are 683 and 255 module files, which Node resolves, reads and links one by one at
// every start: over half of the modules of `leadrun serve`, and Kysely two thirds of an admin command's
// (docs/PERFORMANCE.md). Each package's entry points (its `exports`) become one file each, with the code they share in
// chunks, so that two entry points still share one copy of the package's state.
//
// The bundles go to node_modules/.cache/leadrun-bundles, with a manifest naming each package's version: a bundle of
// another version than the one installed is never used. `node scripts/bundle-deps.ts` makes them again. If they cannot
// be made, the install goes on with a warning: leadrun then loads the packages as installed, only more slowly.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'rolldown';
import { BUNDLED_PACKAGES, type BundleManifest } from '../src/bundled-deps.ts';

const root = path.resolve(import.meta.dirname, '..');
const outDir = path.join(root, 'node_modules/.cache/leadrun-bundles');
/** Where a run writes, moved to `outDir` whole once every bundle and the manifest are written. */
const staging = `${outDir}.new-${process.pid}`;

interface PackageJson {
  version: string;
  exports: Record<string, string | Record<string, string>>;
}

/** A package's entry points for `import`: the file each subpath of its `exports` names, by a name for its bundle. */
function entryPoints(pkg: PackageJson): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const file = typeof target === 'string' ? target : target.import ?? target.default;
    if (!file || !/\.m?js$/.test(file)) continue;
    entries[subpath === '.' ? 'index' : subpath.slice(2)] = file;
  }
  return entries;
}

async function bundle(): Promise<BundleManifest> {
  const manifest: BundleManifest = {};
  rmSync(staging, { recursive: true, force: true });
  for (const name of BUNDLED_PACKAGES) {
    const dir = path.join(root, 'node_modules', name);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PackageJson;
    const entries = entryPoints(pkg);
    await build({
      input: Object.fromEntries(Object.entries(entries).map(([bundle, file]) => [bundle, path.join(dir, file)])),
      platform: 'node',
      logLevel: 'warn',
      output: { dir: path.join(staging, name), format: 'esm', entryFileNames: '[name].mjs', chunkFileNames: 'chunks/[name]-[hash].mjs' },
    });
    manifest[name] = {
      version: pkg.version,
      entries: Object.fromEntries(Object.entries(entries).map(([bundle, file]) => [path.posix.normalize(file), `${name}/${bundle}.mjs`])),
    };
  }
  mkdirSync(staging, { recursive: true });
  writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 1)}\n`);
  rmSync(outDir, { recursive: true, force: true });
  renameSync(staging, outDir);
  return manifest;
}

try {
  const manifest = await bundle();
  process.stdout.write(`bundled ${BUNDLED_PACKAGES.map((name) => `${name} ${manifest[name]!.version}`).join(', ')} into ${path.relative(root, outDir)}\n`);
} catch (error) {
  rmSync(staging, { recursive: true, force: true });
  process.stderr.write(`warning: TypeBox and Kysely could not be bundled, and will load as installed: ${(error as Error).message}\n`);
}
