// The parts of @leadrun/client that need no server: the event-stream reader, Link and Retry-After parsing, and
// webhooks.verify against signatures made here and by the standardwebhooks package, hostile input included.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { beforeEach, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { readEventStream, verifyWebhook, WebhookVerificationError } from '../../packages/client/src/index.ts';
import { nextLinkOf, retryAfterMs } from '../../packages/client/src/transport.ts';

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function events(...chunks: string[]) {
  const out = [];
  for await (const event of readEventStream(streamOf(...chunks))) out.push(event);
  return out;
}

describe('readEventStream', () => {
  it('reads events split anywhere, with LF, CRLF or CR line ends, comments and multi-line data', async () => {
    assert.deepEqual(await events('id: 1\nevent: step.started\nda', 'ta: {"a":1}\n\n: still running\n\n', 'id: 2\r\ndata: x\r\ndata: y\r\n\r\n', 'data:z\r\r'), [
      { id: '1', event: 'step.started', data: '{"a":1}' },
      { id: '2', event: 'message', data: 'x\ny' },
      { id: '2', event: 'message', data: 'z' },
    ]);
  });

  it('keeps multi-byte characters split across chunks, drops an unfinished event and ignores unknown fields', async () => {
    const bytes = new TextEncoder().encode('data: Ångström\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 7));
        controller.enqueue(bytes.slice(7));
        controller.enqueue(new TextEncoder().encode('retry: 10\nbogus\nid: a\0b\ndata: cut off'));
        controller.close();
      },
    });
    const out = [];
    for await (const event of readEventStream(stream)) out.push(event);
    assert.deepEqual(out, [{ id: null, event: 'message', data: 'Ångström' }]);
  });
});

describe('nextLinkOf and retryAfterMs', () => {
  it('finds rel="next" among other links and parameters', () => {
    assert.equal(nextLinkOf('</api/v1/leads?cursor=abc&limit=50>; rel="next"'), '/api/v1/leads?cursor=abc&limit=50');
    assert.equal(nextLinkOf('</a>; rel="prev", </b>; title="x"; rel=next'), '/b');
    assert.equal(nextLinkOf('</a>; rel="prev"'), null);
    assert.equal(nextLinkOf('</a>; rel="nextish"'), null);
    assert.equal(nextLinkOf(null), null);
    assert.equal(nextLinkOf('garbage'), null);
  });

  it('reads delta-seconds and HTTP dates, and nothing else', () => {
    assert.equal(retryAfterMs('0'), 0);
    assert.equal(retryAfterMs(' 5 '), 5000);
    assert.equal(retryAfterMs('Wed, 21 Oct 2037 07:28:00 GMT', Date.UTC(2037, 9, 21, 7, 27, 0)), 60_000);
    assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT'), 0, 'a date in the past: at once');
    assert.equal(retryAfterMs('-3'), null);
    assert.equal(retryAfterMs('1.5'), null);
    assert.equal(retryAfterMs(null), null);
  });
});

describe('verifyWebhook', () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const body = JSON.stringify({ type: 'lead.created', timestamp: '2030-01-01T00:00:00.000Z', data: { id: 'x', name: 'Zoë' } });
  const sign = (id: string, timestamp: number, text: string, key = secret) =>
    `v1,${createHmac('sha256', Buffer.from(key.slice(6), 'base64')).update(`${id}.${timestamp}.${text}`).digest('base64')}`;
  // Taken when the tests start, not when the file is loaded: other files' tests may run in between (scripts/test.ts).
  let now = 0;
  beforeEach(() => { now = Math.floor(Date.now() / 1000); });
  const reason = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      assert.ok(error instanceof WebhookVerificationError, String(error));
      return error.reason;
    }
    return 'accepted';
  };

  it('accepts what the standardwebhooks package signs, as text or bytes, with any header case', async () => {
    const id = 'msg_1';
    const date = new Date(now * 1000);
    const signature = new Webhook(secret).sign(id, date, body);
    const headers = { 'Webhook-Id': id, 'Webhook-Timestamp': String(now), 'Webhook-Signature': signature };
    const event = await verifyWebhook(body, headers, secret);
    assert.equal(event.type === 'lead.created' && event.data.name, 'Zoë');
    assert.equal((await verifyWebhook(new TextEncoder().encode(body), new Headers(headers), secret)).type, 'lead.created');
  });

  it('accepts any one matching signature of several, and only v1', async () => {
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    const headers = (signature: string) => ({ 'webhook-id': 'm', 'webhook-timestamp': String(now), 'webhook-signature': signature });
    assert.equal(await reason(verifyWebhook(body, headers(`${sign('m', now, body, other)} ${sign('m', now, body)}`), secret)), 'accepted');
    assert.equal(await reason(verifyWebhook(body, headers(sign('m', now, body).replace('v1,', 'v2,')), secret)), 'invalid_signature');
  });

  it('refuses tampering, replays, wrong secrets and hostile headers', async () => {
    const good = { 'webhook-id': 'm', 'webhook-timestamp': String(now), 'webhook-signature': sign('m', now, body) };
    assert.equal(await reason(verifyWebhook(body.replace('Zoë', 'Eve'), good, secret)), 'invalid_signature');
    assert.equal(await reason(verifyWebhook(body, { ...good, 'webhook-id': 'n' }, secret)), 'invalid_signature');
    assert.equal(await reason(verifyWebhook(body, good, `whsec_${randomBytes(32).toString('base64')}`)), 'invalid_signature');
    assert.equal(await reason(verifyWebhook(body, good, 'whsec_')), 'invalid_secret');
    assert.equal(await reason(verifyWebhook(body, good, 'whsec_!!not base64!!')), 'invalid_secret');
    const old = now - 310;
    assert.equal(await reason(verifyWebhook(body, { ...good, 'webhook-timestamp': String(old), 'webhook-signature': sign('m', old, body) }, secret)), 'timestamp_out_of_tolerance');
    const future = now + 310;
    assert.equal(await reason(verifyWebhook(body, { ...good, 'webhook-timestamp': String(future), 'webhook-signature': sign('m', future, body) }, secret)), 'timestamp_out_of_tolerance');
    for (const timestamp of ['', 'abc', '1e3', '-1', '9'.repeat(400)]) {
      assert.notEqual(await reason(verifyWebhook(body, { ...good, 'webhook-timestamp': timestamp }, secret)), 'accepted', timestamp);
    }
    assert.equal(await reason(verifyWebhook(body, { 'webhook-id': 'm' }, secret)), 'missing_headers');
    assert.equal(await reason(verifyWebhook(body, { ...good, 'webhook-signature': 'v1, v1,, ,,,  v1,@@@' }, secret)), 'invalid_signature');
    assert.equal(await reason(verifyWebhook(body, { ...good, 'webhook-signature': `${'v1,AAAA '.repeat(1000)}` }, secret)), 'invalid_signature');
    assert.equal(await reason(verifyWebhook('not json', { ...good, 'webhook-signature': sign('m', now, 'not json') }, secret)), 'invalid_body');
  });
});
