// After tsc: dist/ gets the generated schema.d.ts (tsc emits no copy of a .d.ts), and the declarations' relative
// imports end in .js as their JavaScript's do. The sources import './x.ts' so that Node runs them as they are;
// tsc rewrites those in the .js it emits but leaves the .d.ts, which a consumer's compiler would then not resolve.
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';

const dist = new URL('../dist/', import.meta.url);
copyFileSync(new URL('../src/schema.d.ts', import.meta.url), new URL('schema.d.ts', dist));
for (const name of readdirSync(dist)) {
  if (!name.endsWith('.d.ts')) continue;
  const file = new URL(name, dist);
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(/(from\s+['"]\.\.?\/[^'"]+)\.ts(['"])/g, '$1.js$2');
  if (rewritten !== text) writeFileSync(file, rewritten);
}
