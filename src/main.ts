// The process entry of `leadrun` (bin/leadrun): the program (src/program.ts) on this process's command line,
// environment and standard streams. A failure exits at once, even with a server half started; a command that
// succeeded ends when its work has.
import { runProgram } from './program.ts';

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
