// Answers are serialized from the routes' schemas with each nullable field of one type written as a type list, and a
// step's output as it is stored (src/http/serializer-schema.ts), so that the serializer needs no validator to choose
// how to write a value. What is rewritten, what is left, and that an answer says the same either way.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Type } from 'typebox';
import { listOf, Nullable, Run, RunStatus, Step, StepOutput, Timestamp } from '../../src/schemas/index.ts';
import { forSerializer } from '../../src/http/serializer-schema.ts';
import { BACKENDS, startTestApp, TRANSCRIPT, waitForRun, type TestApp } from '../helpers.ts';

const json = (value: unknown) => JSON.parse(JSON.stringify(value));

function serializer(schema: unknown): (data: unknown) => string {
  return SerializerSelector()({}, {})({ schema, method: 'GET', url: '/', httpStatus: '200' }) as (data: unknown) => string;
}

describe('the schemas answers are serialized with', () => {
  it('write a nullable field of one type, or a nullable enum of strings, with a type list', () => {
    const schema = Type.Object({
      at: Nullable(Timestamp('When.')),
      count: Nullable(Type.Integer()),
      status: Nullable(RunStatus),
      usage: Nullable(Type.Object({ tokens: Type.Integer() }, { description: 'Spent.' })),
    });
    const before = json(schema);
    assert.deepEqual(json(forSerializer(schema)).properties, {
      at: { type: ['string', 'null'], format: 'date-time', maxLength: 27, description: 'When.' },
      count: { type: ['integer', 'null'] },
      status: { type: ['string', 'null'], enum: before.properties.status.anyOf[0].enum },
      usage: { type: ['object', 'null'], required: ['tokens'], properties: { tokens: { type: 'integer' } }, description: 'Spent.' },
    });
    assert.deepEqual(json(schema), before, 'the schema itself is left as it was');
  });

  it('leave every other union as it is', () => {
    const unions = {
      twoTypes: Type.Union([Type.String(), Type.Integer()]),
      three: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
      nullableUnion: Nullable(Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })])),
      mixedEnum: Nullable(Type.Union([Type.Literal('a'), Type.Literal(1)])),
    };
    const schema = Type.Object(unions);
    assert.deepEqual(json(forSerializer(schema)).properties, json(schema).properties);
  });

  it("write a step's output as it is stored, null or not", () => {
    assert.deepEqual(json(forSerializer(Step)).properties.output, {});
    assert.deepEqual(json(forSerializer(StepOutput)), {});
    assert.deepEqual(json(forSerializer(Type.Object({ output: Nullable(StepOutput) }))).properties.output, {});
  });

  describe('an answer serialized with them', () => {
    let t: TestApp;
    before(async () => { t = await startTestApp(BACKENDS[0] ?? 'pglite'); });
    after(() => t?.close());

    it('says the same: finished and queued runs, their outputs as GET /api/v1/runs/{id} writes them', async () => {
      const ws = await t.workspace();
      const { key } = await t.key(ws.id);
      const lead = await t.api('POST', '/api/v1/leads', { key, body: { name: 'Ada Lovelace', email: 'ada@example.com', companyName: 'Analytical Engines' } });
      const call = await t.api('POST', `/api/v1/leads/${lead.json.id}/calls`, { key, body: { transcript: TRANSCRIPT } });
      const start = () => t.api('POST', '/api/v1/runs', { key, body: { leadId: lead.json.id, callId: call.json.id } });
      const finished = await start();
      assert.equal(finished.status, 202, finished.text);
      const worker = await t.startWorker();
      await waitForRun(t, key, finished.json.id, (run) => run.status === 'AWAITING_APPROVAL');
      await worker.stop();
      assert.equal((await start()).status, 202);

      const list = await t.api('GET', '/api/v1/runs', { key });
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(list.json.data.map((run: { status: string }) => run.status), ['QUEUED', 'AWAITING_APPROVAL']);
      const schema = listOf(Run, 100);
      assert.equal(serializer(forSerializer(schema))(list.json), list.text, 'the route wrote them so');
      assert.deepEqual(JSON.parse(serializer(schema)(list.json)), list.json, "the document's schemas say the same");
      const withoutOutputs = structuredClone(list.json);
      for (const run of withoutOutputs.data) for (const step of run.steps) step.output = null;
      assert.equal(serializer(forSerializer(schema))(withoutOutputs), serializer(schema)(withoutOutputs), 'to the byte, outputs apart');

      const one = await t.api('GET', `/api/v1/runs/${finished.json.id}`, { key });
      assert.deepEqual(list.json.data[1], one.json.data);
      for (const step of one.json.data.steps) {
        const output = JSON.stringify(step.output);
        assert.ok(one.text.includes(output) && list.text.includes(output), `${step.node}'s output is written as stored, in both`);
      }
    });
  });
});
