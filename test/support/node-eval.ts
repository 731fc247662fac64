// A script of ES module code run by a new Node.js process in the project's folder: for a test about what a process
// loads or compiles from its start, which the test's own process did long before. NODE_OPTIONS is emptied, so that
// nothing the test runner set reaches the script.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The URL of a file of the project (`src/…`), for an `import()` in a script. */
export const projectModule = (file: string): string => pathToFileURL(path.join(ROOT, file)).href;

/** Runs `script` with Node's `nodeArgs` before it; resolves to what it wrote on its standard output. */
export async function runModuleScript(script: string, nodeArgs: string[] = []): Promise<string> {
  const args = [...nodeArgs, '--input-type=module', '--eval', script];
  const env = { ...process.env, NODE_OPTIONS: '' };
  const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}
