// The version of the run's draft each of its events belongs to, numbered as GET /api/v1/runs/{id}/drafts numbers them
// (src/domain/drafts.ts): WRITER's first draft is 1, and each later version, a person's edit (`draft.edited`) or a
// regeneration a person asked for (`run.regenerating`), is the next. So the trace and the version list agree: a
// regeneration after an edit of v1 writes v3, after v2, the edit.

/** The fields of a run event this reads. */
export interface VersionedEvent {
  id: number;
  type: string;
}

/** The events that make the draft's next version: the edit's own event, and the regeneration that WRITER then ends. */
const NEXT_VERSION: ReadonlySet<string> = new Set(['draft.edited', 'run.regenerating']);

/** The draft version each event (by id) belongs to, in the order the log records them. */
export function draftVersionsOf(events: readonly VersionedEvent[]): Map<number, number> {
  const versions = new Map<number, number>();
  let version = 1;
  for (const event of events) {
    if (NEXT_VERSION.has(event.type)) version++;
    versions.set(event.id, version);
  }
  return versions;
}
