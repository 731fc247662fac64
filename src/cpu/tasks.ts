// The tasks a CPU pool thread runs (src/cpu/pool.ts): each is a pure function of its input, whose input and
// answer cross the thread boundary by structured clone. This module is loaded only in the pool's threads.
import type { Engine, RunContext } from '../agent/engine.ts';
import { offlineRules } from '../agent/engines/offline.ts';
import { checkGrounding, type Draft } from '../agent/grounding.ts';
import { readPage } from '../agent/page.ts';
import { prepareImportReading, readImportFile } from '../domain/lead-import-file.ts';
import { readReply } from '../mail/reply-reading.ts';
import type { TaskEnvelope } from './pool.ts';

export const TASKS = {
  /** RESEARCH: one fetched page, read. */
  readPage,
  /** The offline engine's three steps. */
  analyse: (ctx: Parameters<Engine['analyse']>[0]) => offlineRules.analyse(ctx),
  strategise: (ctx: Parameters<Engine['strategise']>[0]) => offlineRules.strategise(ctx),
  write: (ctx: Parameters<Engine['write']>[0]) => offlineRules.write(ctx),
  /** WRITER's grounding guard, for every engine's draft. */
  checkGrounding: ({ draft, ctx }: { draft: Draft; ctx: RunContext }) => checkGrounding(draft, ctx),
  /** A lead import's file: parsed, and every row validated. */
  readLeadImport: readImportFile,
  /** One message of a rep's inbox, read as a possible reply. */
  readReply,
};

// As the thread starts, so that a task's time budget does not pay for it.
prepareImportReading();

export default function run(envelope: TaskEnvelope): unknown {
  // The pool starts the task's time budget when it hears this.
  envelope.started.postMessage(0);
  envelope.started.close();
  const task = TASKS[envelope.task] as (input: unknown) => unknown;
  return task(envelope.input);
}
