// The working folder of a test process: what `./` means to the configuration of a test's app, and to a `leadrun`
// command a test starts unless it names a folder. The configuration keeps its data in `./.leadrun` when given no
// DATA_DIR (the secrets key of an app on PostgreSQL, for instance), and that must never be the project's own folder.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

let folder: string | undefined;

/** A temporary folder of this test process, made at the first call and removed when the process exits. */
export function workingDir(): string {
  if (folder === undefined) {
    const made = mkdtempSync(path.join(os.tmpdir(), 'leadrun-cwd-'));
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
    folder = made;
  }
  return folder;
}
