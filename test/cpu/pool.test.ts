// The CPU pool (src/cpu/pool.ts): tasks run in worker threads; a task over its time budget has its thread ended
// and fails with CpuBudgetExceeded, and the pool goes on with a fresh thread; time waiting in the queue does not
// count against a task's budget; a caller's abort stops the task.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { readPage } from '../../src/agent/page.ts';
import { CpuBudgetExceeded, createCpuPool, type CpuPool } from '../../src/cpu/pool.ts';
import { importReader } from '../../src/domain/leads/import.ts';

const SMALL = '<html><head><title>Kestrel</title></head><body><main><p>Kestrel plans routes for 400 carriers across Europe.</p></main></body></html>';
/** About 1 MiB of ordinary paragraphs: real work for a thread, far more than a few milliseconds of it. */
const LARGE = `<html><body><main>${'<p>Kestrel plans delivery routes for 400 carriers in 12 countries. </p>'.repeat(15_000)}</main></body></html>`;
/** A quarter of that, for tasks that must fit their budget. */
const MEDIUM = `<html><body><main>${'<p>Kestrel plans delivery routes for 400 carriers in 12 countries. </p>'.repeat(4_000)}</main></body></html>`;
const input = (html: string) => ({ html, url: 'https://kestrel.example/', companyName: 'Kestrel', followUps: 2 });

describe('the CPU pool', () => {
  const pools: CpuPool[] = [];
  const pool = (budgetMs: number, threads = 1): CpuPool => {
    const created = createCpuPool({ budgetMs, threads });
    pools.push(created);
    return created;
  };
  after(async () => {
    for (const p of pools) await p.close();
  });

  it('runs a task in a thread and answers what the function answers in-process', async () => {
    const answer = await pool(10_000).run('readPage', input(SMALL));
    assert.deepEqual(answer, readPage(input(SMALL)));
    assert.equal(answer.title, 'Kestrel');
  });

  it('hands a file\'s bytes in memory of their own to the thread, and copies a small one that shares its memory', async () => {
    const read = importReader(pool(10_000));
    const rows = Array.from({ length: 2_000 }, (_, i) => `Person ${i},p${i}@example.com`).join('\n');
    const large = Buffer.from(`name,email\n${rows}\n`);
    assert.ok(large.byteLength > 4096 && large.byteOffset === 0 && large.byteLength === large.buffer.byteLength, 'memory of its own');
    const input = { format: 'csv' as const, map: {}, dedupe: false, userIds: [] };
    const answer = await read({ ...input, bytes: large });
    assert.ok(answer.ok && answer.rows === 2_000, JSON.stringify(answer).slice(0, 300));
    assert.equal(large.byteLength, 0, 'handed over, not copied: the caller\'s view is empty');

    const small = Buffer.from('name\nAda\n'); // a slice of Node's shared pool of small buffers
    assert.notEqual(small.byteLength, small.buffer.byteLength);
    const again = await read({ ...input, bytes: small });
    assert.ok(again.ok && again.rows === 1);
    assert.equal(small.toString(), 'name\nAda\n', 'copied: the memory it shares is left alone');
  });

  it('ends a task over its budget with CpuBudgetExceeded, and the next task runs on a fresh thread', async () => {
    const cpu = pool(20);
    // Warm the thread up (its first task compiles the reading code), so the budget below is the large task's own.
    for (let i = 0; i < 5; i++) if (await cpu.run('readPage', input(SMALL)).then(() => true, () => false)) break;
    const error = await cpu.run('readPage', input(LARGE)).then(() => null, (e: unknown) => e);
    assert.ok(error instanceof CpuBudgetExceeded, `expected CpuBudgetExceeded, got ${String(error)}`);
    assert.equal(error.limit, 'time');
    assert.equal(error.task, 'readPage');
    assert.match(error.message, /took longer than its CPU budget of 20 ms/);
    // The fresh thread is cold as the first was: on a loaded machine its first small task can overrun 20 ms too.
    let next = null;
    for (let i = 0; i < 5 && !next; i++) next = await cpu.run('readPage', input(SMALL)).catch((e: unknown) => { if (e instanceof CpuBudgetExceeded) return null; throw e; });
    assert.equal(next?.title, 'Kestrel');
  });

  it('does not count the time a task waits in the queue against its budget', async (t) => {
    // Calibrated on this machine: a queue several budgets long, each task well inside the budget.
    const began = performance.now();
    readPage(input(MEDIUM));
    const oneTask = performance.now() - began;
    const budgetMs = Math.max(1_000, Math.ceil(oneTask * 4));
    const count = Math.ceil((2 * budgetMs) / oneTask) + 1;
    t.diagnostic(`one task ${Math.round(oneTask)} ms in-process; ${count} queued on one thread with a ${budgetMs} ms budget`);
    const cpu = pool(budgetMs, 1);
    const answers = await Promise.all(Array.from({ length: count }, () => cpu.run('readPage', input(MEDIUM))));
    assert.equal(answers.length, count);
  });

  it('stops a task when the caller aborts, with the caller\'s reason', async () => {
    const cpu = pool(60_000);
    const controller = new AbortController();
    const running = cpu.run('readPage', input(LARGE), { signal: controller.signal });
    controller.abort(new Error('the run was cancelled'));
    await assert.rejects(running, /the run was cancelled/);
    const already = new AbortController();
    already.abort(new Error('cancelled before it began'));
    await assert.rejects(cpu.run('readPage', input(SMALL), { signal: already.signal }), /cancelled before it began/);
  });
});
