// How many event streams one API key (or one signed-in user) may hold open at once. A stream holds a slot from
// its opening to its end; past the limit, opening another is refused (429). Slots are counted in this process and,
// with REDIS_URL, across every process too: a Redis sorted set per holder whose members are leases that the process
// holding them renews, so that the slots of a process that died free themselves within a lease.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Open event streams a key (or a UI user) may hold at once. */
export const STREAMS_PER_HOLDER = 10;
/** What a client refused a slot is told to wait before trying again, in seconds. */
export const STREAM_RETRY_AFTER_SECONDS = 5;

const LEASE_MS = 60_000;
const RENEW_MS = 20_000;

// Drops the expired leases, then adds this one if the holder has room: one atomic step, so that processes opening
// streams for one key at the same moment cannot together go past the limit.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

export interface Slot {
  /** Gives the place back; resolves once every process can see it free. */
  release(): Promise<void>;
}

export interface StreamSlotsOptions {
  limit?: number;
  /** Shared counting; null counts in this process alone. */
  redis?: Redis | null;
  /** Prefix of leadrun's keys in Redis. */
  prefix?: string;
  /** Told once when Redis starts failing; meanwhile slots are counted in this process only (as rate limits, it fails open). */
  onError?: (error: unknown) => void;
}

export class StreamSlots {
  readonly limit: number;
  readonly #redis: Redis | null;
  readonly #prefix: string;
  readonly #onError: (error: unknown) => void;
  /** Holder → slots held in this process. */
  readonly #held = new Map<string, number>();
  /** Lease member → its Redis key, for every slot this process holds in Redis. */
  readonly #leases = new Map<string, string>();
  #renewal: NodeJS.Timeout | null = null;
  #failing = false;

  constructor(options: StreamSlotsOptions = {}) {
    this.limit = options.limit ?? STREAMS_PER_HOLDER;
    this.#redis = options.redis ?? null;
    this.#prefix = options.prefix ?? '';
    this.#onError = options.onError ?? (() => {});
  }

  /** A slot for `holder` (e.g. `key:<id>`), or null when it holds the limit already. */
  async acquire(holder: string): Promise<Slot | null> {
    const here = this.#held.get(holder) ?? 0;
    if (here >= this.limit) return null;
    // Taken before any await: requests of this process that arrive together cannot all see room for one.
    this.#held.set(holder, here + 1);
    let lease: { key: string; member: string } | null = null;
    if (this.#redis) {
      const key = `${this.#prefix}streams:${holder}`;
      const member = randomUUID();
      const now = Date.now();
      try {
        const admitted = await this.#redis.eval(ACQUIRE, 1, key, now, this.limit, now + LEASE_MS, member, LEASE_MS);
        if (admitted !== 1) {
          this.#put(holder);
          return null;
        }
        this.#failing = false;
        lease = { key, member };
        this.#leases.set(member, key);
        this.#renewSoon();
      } catch (error) {
        this.#failed(error);
      }
    }
    let released: Promise<void> | null = null;
    return {
      release: () => {
        released ??= (async () => {
          this.#put(holder);
          if (!lease || !this.#redis) return;
          this.#leases.delete(lease.member);
          await this.#redis.zrem(lease.key, lease.member).then(() => {}, (error: unknown) => this.#failed(error));
        })();
        return released;
      },
    };
  }

  /** Stops renewing leases; those still held expire on their own. */
  close(): void {
    if (this.#renewal) clearInterval(this.#renewal);
    this.#renewal = null;
  }

  #failed(error: unknown): void {
    if (!this.#failing) this.#onError(error);
    this.#failing = true;
  }

  #put(holder: string): void {
    const here = (this.#held.get(holder) ?? 1) - 1;
    if (here > 0) this.#held.set(holder, here);
    else this.#held.delete(holder);
  }

  #renewSoon(): void {
    if (this.#renewal) return;
    this.#renewal = setInterval(() => {
      if (this.#leases.size === 0 || !this.#redis) return this.close();
      const expires = Date.now() + LEASE_MS;
      const batch = this.#redis.pipeline();
      for (const [member, key] of this.#leases) batch.zadd(key, 'XX', expires, member).pexpire(key, LEASE_MS);
      batch.exec().catch((error: unknown) => this.#failed(error));
    }, RENEW_MS);
    this.#renewal.unref();
  }
}
