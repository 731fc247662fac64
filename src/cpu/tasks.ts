// The tasks a CPU pool thread runs (src/cpu/pool.ts): each is a pure function of its input, whose input and
// answer cross the thread boundary by structured clone. This module is loaded only in the pool's threads.
//
// A thread loads the code of a task when it is first given one: a thread that reads websites or runs the offline
// engine never loads the lead import's schemas and validators, which cost about 0.2 s of CPU. A thread starts again
// after a hostile input has it ended, so this is paid often. The loading is done before the task's time budget
// starts, as is the compiling of the import's validators.
import type { RunContext } from '../agent/engine.ts';
import type { Draft } from '../agent/grounding.ts';
import type { People } from '../agent/transcript/types.ts';
import type { MessagePort } from 'node:worker_threads';

const offline = async () => (await import('../agent/engines/offline/rules.ts')).offlineRules;

const LOADERS = {
  /** RESEARCH: one fetched page, read. */
  readPage: async () => (await import('../agent/page.ts')).readPage,
  /** The offline engine's three steps. */
  analyse: async () => (await offline()).analyse,
  strategise: async () => (await offline()).strategise,
  write: async () => (await offline()).write,
  /** A call's transcript read into utterances and sides (src/agent/transcript/), for any engine's steps. */
  readTranscript: async () => {
    const { readTranscript } = await import('../agent/transcript/index.ts');
    return ({ text, people }: { text: string; people: People }) => readTranscript(text, people);
  },
  /** Where the quotes of a model's ANALYSIS were said, for its WRITER brief. */
  quoteLines: async () => (await import('../agent/prompts/brief.ts')).quoteLines,
  /** WRITER's grounding guard, for every engine's draft. */
  checkGrounding: async () => {
    const { checkGrounding } = await import('../agent/grounding.ts');
    return ({ draft, ctx }: { draft: Draft; ctx: RunContext }) => checkGrounding(draft, ctx);
  },
  /** WRITER's checks of a draft (the grounding guard among them), for every engine's draft. */
  checkDraft: async () => {
    const { checkDraft } = await import('../agent/draft-checks.ts');
    return ({ draft, ctx }: { draft: Draft; ctx: RunContext }) => checkDraft(draft, ctx);
  },
  /** A lead import's file: parsed, and every row validated. */
  readLeadImport: async () => {
    const { prepareImportReading, readImportFile } = await import('../domain/leads/import-file.ts');
    prepareImportReading();
    return readImportFile;
  },
  /** One message of a rep's inbox, read as a possible reply. */
  readReply: async () => (await import('../mail/reply-reading.ts')).readReply,
  /** Follow-ups (src/agent/follow-up/): the offline writer's, and a model's briefed and checked. */
  writeFollowUpOffline: async () => (await import('../agent/follow-up/work.ts')).writeFollowUpOffline,
  briefFollowUp: async () => (await import('../agent/follow-up/work.ts')).briefFollowUp,
  checkFollowUpDraft: async () => (await import('../agent/follow-up/work.ts')).checkFollowUpDraft,
  /** A suppression list's CSV file (src/domain/suppressions/csv.ts). */
  readSuppressionFile: async () => (await import('../domain/suppressions/csv.ts')).readSuppressionFile,
  /** A delivery status notification (RFC 3464) found in an inbox (src/mail/dsn.ts). */
  readDsn: async () => (await import('../mail/dsn.ts')).readDsn,
  /** What a reply says, read offline (src/agent/replies/). */
  classifyReply: async () => (await import('../agent/replies/classify.ts')).classifyReply,
};

/** What a thread receives: the task, its input, and a port on which it says that it has begun. */
export interface TaskEnvelope {
  task: keyof Tasks;
  input: unknown;
  started: MessagePort;
}

/** Each task's function, by name. */
export type Tasks = { [K in keyof typeof LOADERS]: Awaited<ReturnType<(typeof LOADERS)[K]>> };

const loaded: { [K in keyof Tasks]?: Promise<(input: unknown) => unknown> } = {};

export default async function run(envelope: TaskEnvelope): Promise<unknown> {
  const perform = await (loaded[envelope.task] ??= LOADERS[envelope.task]() as Promise<(input: unknown) => unknown>);
  // The pool starts the task's time budget when it hears this.
  envelope.started.postMessage(0);
  envelope.started.close();
  return perform(envelope.input);
}
