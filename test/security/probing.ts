// What the tests of a real `serve` under a heavy lead import share: the import sent while /healthz is probed every
// 50 ms, and the longest the server's event loop was held up meanwhile, as its own metrics say.
import assert from 'node:assert/strict';

/** The longest the server's event loop was held up since the last call: prom-client resets it at each scrape. */
export async function loopDelayMaxMs(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = /^leadrun_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
  assert.ok(line, 'the event loop delay is among the metrics');
  return Number(line[1]) * 1000;
}

export interface ProbedImport {
  status: number;
  text: string;
  /** How long the import took to answer. */
  ms: number;
  /** The slowest /healthz answer, the probe still waiting when the import answered included. */
  slowestProbe: number;
  probes: number;
  /** The longest the server's event loop was held up from the import's start to its answer. */
  loopMax: number;
}

/** POSTs a CSV file of leads to the import, probing /healthz every 50 ms until it answers. */
export async function importWhileProbing(baseUrl: string, key: string, body: string | Buffer, query: string): Promise<ProbedImport> {
  await loopDelayMaxMs(baseUrl); // measured from here
  let importing = true;
  const began = performance.now();
  const answer = fetch(`${baseUrl}/api/v1/leads/import${query}`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' }, body,
  }).then(async (res) => ({ status: res.status, text: await res.text() })).finally(() => { importing = false; });
  let slowestProbe = 0;
  let probes = 0;
  while (importing) {
    const probe = performance.now();
    const res = await fetch(`${baseUrl}/healthz`);
    await res.arrayBuffer();
    assert.equal(res.status, 200);
    slowestProbe = Math.max(slowestProbe, performance.now() - probe);
    probes += 1;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { status, text } = await answer;
  return { status, text, ms: performance.now() - began, slowestProbe, probes, loopMax: await loopDelayMaxMs(baseUrl) };
}
