// Feeds the event streams of this process. One LISTEN hears that a run's log grew; one read of that run (its status
// and its new events) then serves every stream following it, however many there are, so that a crowd of streams
// on one run costs the database what one stream does. A stream ends when its run rests, when the key or session
// that opened it stops letting anyone in, and when the process closes.
//
// The worker notifies of a run's steps only while some process follows the run (runs.followers, 0018): a feed counts
// itself in before its first read and out when its last stream ends. The count is written to the run row, which the
// worker's step statements lock, so no event falls between the first read and the first notice (src/jobs/sql/run/).
import { sql, type Kysely } from 'kysely';
import { systemClock, type Clock } from '../clock.ts';
import type { Database } from '../db/database.ts';
import type { DB, RunStatus } from '../db/schema.ts';
import { credentialName, validCredentials, type Credential } from '../domain/keys/credentials.ts';
import { KEY_REVOKED_CHANNEL } from '../domain/keys/keys.ts';
import { isSettled, readRunProgress, type RunEvent } from '../domain/runs/events.ts';
import { RUN_EVENTS_CHANNEL } from '../domain/runs/lifecycle.ts';

/** Events read at once for a run; a longer log is read in turns. */
const PAGE = 500;
/** A notice can be lost (a LISTEN connection that dropped): a followed run is read this often anyway. */
const FALLBACK_READ_MS = 15_000;
/**
 * How often the credentials of open streams are checked. With the check's own time, a stream ends well within a
 * second of its key's revocation or its session's sign-out, even when no notice of it reaches this process.
 */
export const CREDENTIAL_CHECK_MS = 250;

export type StreamEnd =
  | { reason: 'rest'; status: RunStatus | null }
  | { reason: 'revoked' }
  | { reason: 'closing' }
  | { reason: 'failed'; error: unknown };

export interface StreamSink {
  /** New events of the run, oldest first. */
  send(events: RunEvent[]): void;
  /** Called once: the stream is over. */
  end(how: StreamEnd): void;
}

export interface Follow {
  workspaceId: string;
  runId: string;
  /** The number of the last event the client has seen. */
  after: number;
  credential: Credential;
}

interface Follower {
  after: number;
  credential: Credential;
  sink: StreamSink;
}

type ReadProgress = (after: number) => Promise<{ status: RunStatus; delivering: boolean; events: RunEvent[] } | null>;

/** Counts this process in (+1) or out (-1) of a run's followers; true when the run was found. */
async function countFollower(db: Kysely<DB>, workspaceId: string, runId: string, by: 1 | -1): Promise<boolean> {
  const result = await sql`
    UPDATE runs SET followers = GREATEST(0, followers + ${by}::int) WHERE id = ${runId}::uuid AND workspace_id = ${workspaceId}::uuid`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** The streams of one run in this process, and the reads that feed them. */
class RunFeed {
  readonly runId: string;
  readonly workspaceId: string;
  readonly followers = new Set<Follower>();
  readonly #read: ReadProgress;
  readonly #end: (follower: Follower, how: StreamEnd) => void;
  readonly #timer: NodeJS.Timeout;
  /** Settles once the run counts this feed among its followers: true, or false when it could not be counted. */
  readonly counted: Promise<boolean>;
  #reading = false;
  #again = false;

  constructor(
    runId: string, workspaceId: string, read: ReadProgress, end: (follower: Follower, how: StreamEnd) => void, counted: Promise<boolean>,
  ) {
    this.runId = runId;
    this.workspaceId = workspaceId;
    this.#read = read;
    this.#end = end;
    this.counted = counted;
    this.#timer = setInterval(() => this.wake(), FALLBACK_READ_MS);
  }

  /** Reads the run once for every follower; a wake-up during a read makes one more read after it. */
  wake(): void {
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    void this.#drain().finally(() => { this.#reading = false; });
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async #drain(): Promise<void> {
    // Read only once the worker notifies of this run's steps (a failed count leaves the fallback reads).
    await this.counted;
    do {
      this.#again = false;
      // Those following when the read starts get what it finds; who comes during it is served by the next read.
      const members = [...this.followers];
      if (members.length === 0) return;
      let after = Infinity;
      for (const m of members) after = Math.min(after, m.after);
      let progress: Awaited<ReturnType<ReadProgress>>;
      try {
        progress = await this.#read(after);
      } catch (error) {
        for (const m of members) this.#end(m, { reason: 'failed', error });
        continue;
      }
      for (const m of members) {
        if (!this.followers.has(m) || !progress) continue;
        const fresh = progress.events.filter((e) => e.id > m.after);
        if (fresh.length === 0) continue;
        m.after = fresh[fresh.length - 1]!.id;
        m.sink.send(fresh);
      }
      if (progress && progress.events.length === PAGE) {
        this.#again = true;
      } else if (!progress || isSettled(progress)) {
        // Every member now has the whole log: the read began at or before each one's place and found its end.
        for (const m of members) this.#end(m, { reason: 'rest', status: progress?.status ?? null });
      }
    } while (this.#again);
  }
}

export class RunEventHub {
  /** runId → workspaceId → feed. A run has one workspace; the second level keeps a feed to the workspace it was asked for. */
  readonly #feeds = new Map<string, Map<string, RunFeed>>();
  readonly #followers = new Map<Follower, RunFeed>();
  #db: Kysely<DB> | null = null;
  #clock: Clock = systemClock;
  #unlisten: Array<() => Promise<void>> = [];
  #closed = false;
  #credentialTimer: NodeJS.Timeout | null = null;
  /** Counts out not yet written: close() waits for them. */
  readonly #leaving = new Set<Promise<unknown>>();
  #checking = false;
  #checkAgain = false;

  /** `clock` decides whether a session has expired, as it does when the session signs a request in. */
  async start(database: Database, clock: Clock): Promise<void> {
    this.#db = database.db;
    this.#clock = clock;
    this.#unlisten.push(await database.listen(RUN_EVENTS_CHANNEL, (runId) => {
      for (const feed of this.#feeds.get(runId)?.values() ?? []) feed.wake();
    }));
    // The notice names the key by its digest, which streams do not keep: any revocation has them all checked now.
    this.#unlisten.push(await database.listen(KEY_REVOKED_CHANNEL, () => this.checkCredentials()));
  }

  /** Ends every stream (clients resume elsewhere with Last-Event-ID) and stops listening. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#unlisten.splice(0).map((unlisten) => unlisten()));
    for (const follower of [...this.#followers.keys()]) this.#end(follower, { reason: 'closing' });
    await Promise.all([...this.#leaving]);
  }

  /**
   * Follows a run from the event numbered `after`: `sink` receives its events as they are written, then its end.
   * Returns what stops following (the client went away); the sink is not told.
   */
  follow(follow: Follow, sink: StreamSink): () => void {
    const follower: Follower = { after: follow.after, credential: follow.credential, sink };
    if (this.#closed) {
      sink.end({ reason: 'closing' });
      return () => {};
    }
    let byWorkspace = this.#feeds.get(follow.runId);
    if (!byWorkspace) {
      byWorkspace = new Map();
      this.#feeds.set(follow.runId, byWorkspace);
    }
    let feed = byWorkspace.get(follow.workspaceId);
    if (!feed) {
      const db = this.#database();
      // A run that cannot be counted (the database failed) is still read every FALLBACK_READ_MS.
      const counted = countFollower(db, follow.workspaceId, follow.runId, 1).catch(() => false);
      feed = new RunFeed(
        follow.runId,
        follow.workspaceId,
        (after) => readRunProgress(db, follow.workspaceId, follow.runId, after, PAGE),
        (f, how) => this.#end(f, how),
        counted,
      );
      byWorkspace.set(follow.workspaceId, feed);
    }
    feed.followers.add(follower);
    this.#followers.set(follower, feed);
    this.#credentialTimer ??= setInterval(() => this.checkCredentials(), CREDENTIAL_CHECK_MS);
    feed.wake();
    return () => {
      const joined = this.#followers.get(follower);
      if (joined) this.#detach(follower, joined);
    };
  }

  /**
   * Ends the streams whose key was revoked or whose session ended, in one query for every stream of the process.
   * Runs on a timer while streams are open, and at once when a revocation is heard.
   */
  checkCredentials(): void {
    if (this.#followers.size === 0) return;
    if (this.#checking) {
      this.#checkAgain = true;
      return;
    }
    this.#checking = true;
    void (async () => {
      do {
        this.#checkAgain = false;
        const followers = [...this.#followers.keys()];
        const credentials = new Map(followers.map((f) => [credentialName(f.credential), f.credential]));
        try {
          const valid = await validCredentials(this.#database(), credentials.values(), this.#clock.now());
          for (const f of followers) if (!valid.has(credentialName(f.credential))) this.#end(f, { reason: 'revoked' });
        } catch {
          // The database cannot answer now; the next check asks again.
        }
      } while (this.#checkAgain);
    })().finally(() => { this.#checking = false; });
  }

  #database(): Kysely<DB> {
    if (!this.#db) throw new Error('RunEventHub used before start()');
    return this.#db;
  }

  #end(follower: Follower, how: StreamEnd): void {
    const feed = this.#followers.get(follower);
    if (!feed) return;
    this.#detach(follower, feed);
    follower.sink.end(how);
  }

  #detach(follower: Follower, feed: RunFeed): void {
    this.#followers.delete(follower);
    feed.followers.delete(follower);
    if (feed.followers.size === 0) {
      feed.stop();
      const db = this.#database();
      const leaving = feed.counted
        .then((counted) => counted && countFollower(db, feed.workspaceId, feed.runId, -1))
        // Left counted, the run only gets the notices every run had before the count.
        .catch(() => {})
        .finally(() => this.#leaving.delete(leaving));
      this.#leaving.add(leaving);
      const byWorkspace = this.#feeds.get(feed.runId);
      byWorkspace?.delete(feed.workspaceId);
      if (byWorkspace?.size === 0) this.#feeds.delete(feed.runId);
    }
    if (this.#followers.size === 0 && this.#credentialTimer) {
      clearInterval(this.#credentialTimer);
      this.#credentialTimer = null;
    }
  }
}
