// The Run that PostgreSQL builds (src/domain/runs/runs.ts) is held to the API's TypeBox schemas: a field added to a
// schema and not to the projection, or the other way round, fails here before any response does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TObject } from 'typebox';
import { RUN_SHAPE } from '../../src/domain/runs/runs.ts';
import { Delivery, DraftGrounding, EmailDraft, Run, RunReply, Step } from '../../src/schemas/index.ts';

const keysOf = (schema: TObject) => Object.keys(schema.properties).sort();

describe('the Run as PostgreSQL builds it', () => {
  it('has the fields of the API schemas, no more and no fewer', () => {
    // traceUrl is the HTTP layer's: it is made from the run's traceId and the installation's address (run-render.ts).
    assert.deepEqual([...RUN_SHAPE.Run, 'traceUrl'].sort(), keysOf(Run));
    assert.deepEqual([...RUN_SHAPE.Step].sort(), keysOf(Step));
    assert.deepEqual([...RUN_SHAPE.EmailDraft].sort(), keysOf(EmailDraft));
    assert.deepEqual([...RUN_SHAPE.DraftGrounding].sort(), keysOf(DraftGrounding));
    assert.deepEqual([...RUN_SHAPE.Delivery].sort(), keysOf(Delivery));
    assert.deepEqual([...RUN_SHAPE.RunReply].sort(), keysOf(RunReply));
  });

  it('fails for a field the schema has and the projection does not', () => {
    const grown = { ...Run.properties, followUpAt: Run.properties.completedAt };
    assert.notDeepEqual([...RUN_SHAPE.Run, 'traceUrl'].sort(), Object.keys(grown).sort());
  });
});
