// The process entry of `leadrun` (bin/leadrun): the program (src/program.ts) on this process's command line,
// environment and standard streams. A failure exits at once, even with a server half started; a command that
// succeeded ends when its work has.
import { runProgram } from './program.ts';

// What leadrun creates is for this user alone: the embedded database's folders and most of its files, DATA_DIR's
// key, socket and holder file. (PGlite sets some files' modes itself, 0666; DATA_DIR at 0700 is what closes those
// off: src/admin/control.ts.) Nothing leadrun writes is meant for others: output a shell redirects is the shell's
// file. Set for the whole process, once, before any thread starts.
process.umask(0o077);

const code = await runProgram(process.argv.slice(2), {
  env: process.env, cwd: currentDirectory(), stdin: process.stdin, stdout: process.stdout, stderr: process.stderr,
}, { ownProcess: true });
if (code !== 0) process.exit(code);

/** The working directory; one line and exit 1 when it was deleted under the shell that runs leadrun. */
function currentDirectory(): string {
  try {
    return process.cwd();
  } catch {
    process.stderr.write('leadrun: the current directory no longer exists; cd to one that does and run the command again\n');
    process.exit(1);
  }
}
