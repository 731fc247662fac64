// The modules that call node:http take it without building its ES module (src/net/node-http.ts), whose WebSocket getter
// would load undici at every start of serve and worker. Checked in a new process, where nothing else loaded it first.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { projectModule, runModuleScript } from '../support/node-eval.ts';

const MODULES = ['src/agent/website.ts', 'src/agent/engines/model.ts', 'src/domain/webhooks/post.ts'];

/** Whether a new Node.js process had loaded undici once it had imported `specifiers`. */
async function loadsUndici(specifiers: string[]): Promise<boolean> {
  const script = `${specifiers.map((s) => `await import(${JSON.stringify(s)});`).join('\n')}
console.log(JSON.stringify(process.moduleLoadList.some((name) => name.includes('undici'))));`;
  return JSON.parse(await runModuleScript(script)) as boolean;
}

describe('node:http without its ES module', () => {
  it('leaves undici unloaded when the modules that send HTTP requests are imported', async () => {
    assert.equal(await loadsUndici(MODULES.map(projectModule)), false);
  });

  it('would see it loaded by an import of node:http', async () => {
    assert.equal(await loadsUndici(['node:http']), true);
  });
});
