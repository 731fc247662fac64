// `leadrun user password`: the password is asked for twice without echo on a terminal, and read from the first line
// of standard input otherwise. Tested twice over: readNewPassword() with a fake terminal stream (what it writes,
// raw mode, Ctrl-C, typing ahead, a stream with no end), and the real program on a pseudo-terminal made by
// script(1), where the terminal itself would echo whatever is typed while raw mode is off.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { PassThrough, Readable, Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { PasswordInputError, readNewPassword } from '../../src/admin/prompt.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { verifyPassword } from '../../src/domain/members/passwords.ts';
import { createMigratedPostgresDatabase } from '../helpers.ts';
import { cleanEnv, LEADRUN_BIN, leadrunJson, workingDir } from './support.ts';

const EMAIL = 'you@example.com';

/** A terminal as readline sees one: a TTY input with raw mode, and what was written to the person. */
function fakeTerminal() {
  const input = Object.assign(new PassThrough(), { isTTY: true, rawModes: [] as boolean[], setRawMode(mode: boolean) { input.rawModes.push(mode); return input; } });
  let written = '';
  const output = new Writable({ write(chunk, _encoding, done) { written += String(chunk); done(); } });
  /** Resolves once the output ends with `text` (a question asked). */
  const asked = (text: string) => new Promise<void>((resolve) => {
    const check = () => { if (written.endsWith(text)) { output.off('wrote', check); resolve(); } };
    output.on('wrote', check);
    check();
  });
  const write = output.write.bind(output);
  output.write = ((chunk: any, ...rest: any[]) => { const ok = write(chunk, ...rest); output.emit('wrote'); return ok; }) as typeof output.write;
  return { input, output, asked, written: () => written };
}

describe('readNewPassword on a terminal', () => {
  it('asks twice, writes nothing of what is typed, and turns raw mode on while asking and off after', async () => {
    const term = fakeTerminal();
    const answer = readNewPassword(EMAIL, term);
    await term.asked(`New password for ${EMAIL}: `);
    assert.deepEqual(term.input.rawModes, [true], 'raw mode: the terminal echoes nothing itself');
    term.input.write('correct horse\r');
    await term.asked('The same password again: ');
    term.input.write('correct horse\r');
    assert.equal(await answer, 'correct horse');
    assert.equal(term.written(), `New password for ${EMAIL}: \nThe same password again: \n`, 'only the questions, and the line ends');
    assert.deepEqual(term.input.rawModes, [true, false], 'raw mode is off again');
  });

  it('takes both answers typed ahead at once', async () => {
    const term = fakeTerminal();
    term.input.write('correct horse\rcorrect horse\r');
    assert.equal(await readNewPassword(EMAIL, term), 'correct horse');
    assert.equal(term.written(), `New password for ${EMAIL}: \nThe same password again: \n`);
  });

  it('refuses two answers that differ, a password that breaks the rules (without asking again), Ctrl-C and Ctrl-D', async () => {
    const cases: Array<[string, RegExp, boolean]> = [
      ['correct horse\rcorrect house\r', /^the two passwords differ; nothing was changed$/, true],
      ['too short\r', /^the password must be at least 10 characters; nothing was changed$/, false],
      [`${'x'.repeat(201)}\r`, /^the password must be at most 200 characters; nothing was changed$/, false],
      ['correct h\x03', /^cancelled; nothing was changed$/, false],
      ['\x04', /^no password was given; nothing was changed$/, false],
    ];
    for (const [typed, message, askedTwice] of cases) {
      const term = fakeTerminal();
      term.input.write(typed);
      await assert.rejects(readNewPassword(EMAIL, term), (error: Error) => error instanceof PasswordInputError && message.test(error.message));
      assert.equal(term.written().includes('The same password again'), askedTwice, JSON.stringify(typed));
      assert.doesNotMatch(term.written(), /horse|house|xxx|short/, 'nothing typed is written');
      assert.ok(term.written().endsWith(': \n'), `the last question's line is ended, for the error to come on its own: ${JSON.stringify(term.written())}`);
      assert.equal(term.input.rawModes.at(-1), false, 'raw mode is off again');
    }
  });
});

describe('readNewPassword from a stream that is not a terminal', () => {
  const read = (text: string | Readable) => readNewPassword(EMAIL, { input: typeof text === 'string' ? Readable.from([text]) : text, output: new PassThrough() });

  it('takes the first line, without its line end', async () => {
    assert.equal(await read('correct horse\nsecond line\n'), 'correct horse');
    assert.equal(await read('correct horse\r\n'), 'correct horse');
    assert.equal(await read('no line end at all'), 'no line end at all');
    assert.equal(await read(Readable.from(['corr', 'ect ', 'horse\n', 'more'])), 'correct horse', 'across chunks');
    assert.equal(await read(Readable.from([Buffer.from('pässwörd ünd mehr\n').subarray(0, 2), Buffer.from('pässwörd ünd mehr\n').subarray(2)])), 'pässwörd ünd mehr',
      'a character split between two chunks');
  });

  it('refuses an empty first line, and stops reading a line with no end past the longest password', async () => {
    for (const text of ['', '\n', '\r\nsecond line']) {
      await assert.rejects(read(text), (error: Error) => error instanceof PasswordInputError && /^no password on standard input/.test(error.message));
    }
    // An endless stream: reading stops once the line is longer than any password can be.
    let pulled = 0;
    const endless = new Readable({ read() { pulled += 1; this.push('x'.repeat(64)); } });
    await assert.rejects(read(endless), (error: Error) => error instanceof PasswordInputError && /at most 200 characters/.test(error.message));
    assert.ok(pulled < 10, `read ${pulled} chunks`);
  });
});

describe('leadrun user password on a pseudo-terminal', () => {
  let database: { url: string; drop(): Promise<void> };
  let opened: Database;
  let env: Record<string, string>;

  before(async () => {
    database = await createMigratedPostgresDatabase();
    env = { DATABASE_URL: database.url };
    await leadrunJson(['setup', '--name', 'Acme Sales', '--admin-email', EMAIL, '--json'], env);
    opened = await openDatabase({ databaseUrl: database.url });
  });
  after(async () => {
    await opened?.close();
    await database?.drop();
  });

  const hash = async () => (await opened.db.selectFrom('users').select('password_hash').where('email', '=', EMAIL).executeTakeFirstOrThrow()).password_hash;

  /** Runs the command on a terminal and types each answer once its question is on the screen. */
  function typeAnswers(answers: string[]): Promise<{ code: number | null; screen: string }> {
    const child = spawn('script', ['-qec', `'${LEADRUN_BIN}' user password --email ${EMAIL}`, '/dev/null'], {
      env: cleanEnv(env), cwd: workingDir(), stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    const questions = [`New password for ${EMAIL}: `, 'The same password again: '];
    let next = 0;
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      screen += chunk;
      // Typed only once the question is shown: before that raw mode is off, and the terminal would echo it.
      while (next < answers.length && screen.includes(questions[next]!)) child.stdin!.write(`${answers[next++]}\r`);
    });
    return new Promise((resolve) => child.once('close', (code) => resolve({ code, screen })));
  }

  it('asks twice and never shows the password; the new one is set', { timeout: 60_000 }, async () => {
    const { code, screen } = await typeAnswers(['a secret passphrase', 'a secret passphrase']);
    assert.equal(code, 0, screen);
    assert.doesNotMatch(screen, /secret/, `the password is not on the screen: ${JSON.stringify(screen)}`);
    assert.match(screen, /New password for you@example\.com: \r?\nThe same password again: \r?\nSet the password of you@example\.com; they can sign in to the web UI now\./);
    assert.ok(await verifyPassword('a secret passphrase', await hash()));
  });

  it('two answers that differ change nothing and say so in one line', { timeout: 60_000 }, async () => {
    const before = await hash();
    const { code, screen } = await typeAnswers(['another passphrase', 'another passphrasf']);
    assert.equal(code, 1, screen);
    assert.doesNotMatch(screen, /another/);
    assert.match(screen, /^leadrun: the two passwords differ; nothing was changed\r?$/m);
    assert.equal(await hash(), before);
  });
});
