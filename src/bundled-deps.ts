// Loaded before anything else (`--import`, by bin/leadrun and the test runner): TypeBox and Kysely come from the
// bundles that `npm install` made of them (scripts/bundle-deps.ts) instead of from their 683 and 255 module files,
// which Node would resolve, read and link one by one at every start. The same code, in a few files: a `leadrun serve`
// starts with 0.2 s less CPU, an admin command on PostgreSQL with 0.1 s less (decision 0006).
//
// A bundle is used only for the version of its package that is installed. Without bundles (an install that skipped
// its scripts), or once a package has changed, the packages load as installed.
import { readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

export const BUNDLED_PACKAGES = ['typebox', 'kysely'] as const;

/** node_modules/.cache/leadrun-bundles/manifest.json: each package's version, and its entry files' bundles. */
export type BundleManifest = Record<string, {
  version: string;
  /** A file of the package (as its `exports` names it) → its bundle, relative to the manifest. */
  entries: Record<string, string>;
}>;

function readJson(url: URL): unknown {
  try {
    return JSON.parse(readFileSync(url, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The URL of each installed entry file that a bundle of the same version stands in for, to that bundle's URL. */
export function bundledEntries(nodeModules: URL): Map<string, string> {
  const redirects = new Map<string, string>();
  const bundles = new URL('.cache/leadrun-bundles/', nodeModules);
  const manifest = readJson(new URL('manifest.json', bundles)) as BundleManifest | undefined;
  for (const [name, { version, entries }] of Object.entries(manifest ?? {})) {
    const installed = readJson(new URL(`${name}/package.json`, nodeModules)) as { version?: string } | undefined;
    if (installed?.version !== version) continue;
    for (const [file, bundle] of Object.entries(entries)) redirects.set(new URL(`${name}/${file}`, nodeModules).href, new URL(bundle, bundles).href);
  }
  return redirects;
}

const redirects = bundledEntries(new URL('../node_modules/', import.meta.url));
if (redirects.size > 0) {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      const bundle = redirects.get(resolved.url);
      return bundle === undefined ? resolved : { ...resolved, url: bundle };
    },
  });
}
