// A new password for `leadrun user password`: asked for twice without echo when standard input is a terminal,
// else the first line of standard input. Never taken from the command line, where anyone on the machine can read
// it in the process list and the shell keeps it in its history.
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { PASSWORD_MAX, PASSWORD_MIN } from '../domain/members/passwords.ts';

/** The password could not be read, or breaks the rules: one line that says so. */
export class PasswordInputError extends Error {}

export interface PasswordIO {
  /** Standard input: a terminal (`isTTY`) is asked; anything else is read. */
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Where the questions go: standard error, so that standard output holds only the result. */
  output: NodeJS.WritableStream;
}

const NOTHING_CHANGED = 'nothing was changed';

export function checkNewPassword(password: string): void {
  if (password.length < PASSWORD_MIN) throw new PasswordInputError(`the password must be at least ${PASSWORD_MIN} characters; ${NOTHING_CHANGED}`);
  if (password.length > PASSWORD_MAX) throw new PasswordInputError(`the password must be at most ${PASSWORD_MAX} characters; ${NOTHING_CHANGED}`);
}

export async function readNewPassword(email: string, io: PasswordIO): Promise<string> {
  if (!io.input.isTTY) {
    const password = await firstLine(io.input, PASSWORD_MAX + 1);
    if (password === null || password === '') {
      throw new PasswordInputError(`no password on standard input: give it as the first line there, or run this on a terminal to be asked for it; ${NOTHING_CHANGED}`);
    }
    checkNewPassword(password);
    return password;
  }
  const prompt = hiddenPrompt(io);
  try {
    const password = await prompt.ask(`New password for ${email}: `);
    checkNewPassword(password);
    if (await prompt.ask('The same password again: ') !== password) throw new PasswordInputError(`the two passwords differ; ${NOTHING_CHANGED}`);
    return password;
  } finally {
    prompt.close();
  }
}

/**
 * The first line of a stream, without its line end; null for an empty stream. Reading stops at the first line end,
 * or once more than `limit` characters came without one (the caller refuses a line that long).
 */
async function firstLine(input: NodeJS.ReadableStream, limit: number): Promise<string | null> {
  input.setEncoding('utf8');
  let text = '';
  for await (const chunk of input as AsyncIterable<string>) {
    text += chunk;
    const end = text.indexOf('\n');
    if (end >= 0) return text.slice(0, end).replace(/\r$/, '');
    if (text.length > limit) break;
  }
  return text === '' ? null : text.replace(/\r$/, '');
}

/**
 * Questions answered on a terminal without echo: readline reads the line (in raw mode, so the terminal echoes
 * nothing itself) and writes its echo to a stream that drops it. One interface serves every question, so that a
 * line typed ahead is not lost between two of them.
 */
function hiddenPrompt(io: PasswordIO): { ask(question: string): Promise<string>; close(): void } {
  const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = createInterface({ input: io.input, output: muted, terminal: true });
  const typed: string[] = [];
  let waiting: { resolve(line: string): void; reject(error: Error): void } | null = null;
  let ended: Error | null = null;
  const end = (error: Error) => {
    ended ??= error;
    // A question on the screen is ended with its line, so that the error comes on a line of its own.
    if (waiting) io.output.write('\n');
    waiting?.reject(ended);
    waiting = null;
  };
  rl.on('line', (line: string) => {
    if (waiting) waiting.resolve(line);
    else typed.push(line);
    waiting = null;
  });
  rl.on('SIGINT', () => {
    end(new PasswordInputError(`cancelled; ${NOTHING_CHANGED}`));
    rl.close();
  });
  rl.on('close', () => end(new PasswordInputError(`no password was given; ${NOTHING_CHANGED}`)));
  return {
    async ask(question) {
      io.output.write(question);
      const line = typed.shift();
      const answer = line !== undefined ? line : await new Promise<string>((resolve, reject) => {
        if (ended) {
          io.output.write('\n');
          reject(ended);
        } else {
          waiting = { resolve, reject };
        }
      });
      // The Enter key was not echoed either: end the question's line here.
      io.output.write('\n');
      return answer;
    },
    close: () => rl.close(),
  };
}
