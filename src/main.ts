// The process entry of `leadrun` (bin/leadrun): the program (src/program.ts) on this process's command line,
// environment and standard streams. A failure exits at once, even with a server half started; a command that
// succeeded ends when its work has.
import { runProgram } from './program.ts';

const code = await runProgram(process.argv.slice(2), {
  env: process.env, cwd: process.cwd(), stdin: process.stdin, stdout: process.stdout, stderr: process.stderr,
}, { ownProcess: true });
if (code !== 0) process.exit(code);
