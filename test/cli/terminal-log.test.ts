// `leadrun serve` at a terminal writes short lines a person reads (src/observability/terminal-log.ts), one per request; its
// output to anything else stays JSON lines (the other CLI tests read those).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { terminalLine } from '../../src/observability/terminal-log.ts';
import { cleanEnv, freePort, LEADRUN_BIN, tempDir, workingDir } from './support.ts';

const AT = new Date(2026, 11, 7, 9, 5, 3).getTime();

describe('log lines at a terminal', () => {
  it('writes a request as its method, path, status and time', () => {
    const json = JSON.stringify({
      level: 30, time: AT, service: 'leadrun', reqId: 'r1', method: 'GET', url: '/leads?x=1', route: '/leads', status: 200, ms: 6.7,
      msg: 'request',
    });
    assert.equal(terminalLine(json), '09:05:03 GET /leads?x=1 200 6.7 ms\n');
  });

  it('writes another line as its level (unless info), message and fields, and an error with its stack', () => {
    const line = (entry: Record<string, unknown>) => terminalLine(JSON.stringify({ time: AT, service: 'leadrun', ...entry }));
    assert.equal(line({ level: 30, signal: 'SIGTERM', msg: 'shutting down' }), '09:05:03 shutting down signal=SIGTERM\n');
    const err = { type: 'Error', message: 'connection refused', stack: 'Error: connection refused\n    at connect (db.ts:1:1)' };
    assert.equal(line({ level: 40, err, url: 'http://a b', msg: 'a database connection was lost' }),
      '09:05:03 WARN a database connection was lost url="http://a b"\n'
      + '    Error: connection refused\n        at connect (db.ts:1:1)\n');
  });

  it('leaves out Fastify\'s "Server listening at", which the ready line says better, and passes non-JSON on', () => {
    const listening = JSON.stringify({ level: 30, time: AT, msg: 'Server listening at http://127.0.0.1:3000' });
    assert.equal(terminalLine(listening), null);
    assert.equal(terminalLine('not json'), 'not json\n');
  });

  // util-linux's `script` gives the server a pseudo-terminal for its standard output, as a person's shell does.
  const noScript = existsSync('/usr/bin/script') ? false : 'no script(1)';
  it('is what `leadrun serve` writes on a terminal: the ready line, then one line per request', { skip: noScript }, async () => {
    const dir = await tempDir('leadrun-tty-', { migrated: true });
    const port = await freePort();
    const command = `exec '${LEADRUN_BIN}' serve --no-worker`;
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: cleanEnv({ DATA_DIR: dir.path, PORT: String(port), LOG_LEVEL: 'info' }), cwd: workingDir(),
      stdio: ['pipe', 'pipe', 'pipe'], detached: true,
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk; });
    const exited = new Promise((resolve) => child.once('close', resolve));
    try {
      const deadline = Date.now() + 60_000;
      while (!/GET \/leads 200/.test(out)) {
        assert.ok(Date.now() < deadline, `no request line in:\n${out}`);
        await fetch(`http://127.0.0.1:${port}/leads`).catch(() => null);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const lines = out.replace(/\r/g, '').split('\n').filter(Boolean);
      assert.match(lines[0]!, /^leadrun is ready at http:\/\/localhost:\d+ — open it to set up$/, out);
      assert.ok(lines.slice(1).every((line) => /^\d\d:\d\d:\d\d GET \/leads 200 [\d.]+ ms$/.test(line)), out);
      assert.doesNotMatch(out, /"level"/);
    } finally {
      // The whole group: script and the server under it.
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
      await dir.remove();
    }
  });
});
