// One connection per process for PostgreSQL LISTEN, shared by every channel (worker wake-ups, key revocations,
// run events). A lost connection is re-made and every channel listened to again; meanwhile the worker's polling
// and the key cache's one-second limit cover the gap.
import pg from 'pg';

type Callback = (payload: string) => void;

export class PgListener {
  readonly #url: string;
  readonly #channels = new Map<string, Set<Callback>>();
  #client: pg.Client | null = null;
  #connecting: Promise<void> | null = null;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(url: string) {
    this.#url = url;
  }

  async listen(channel: string, callback: Callback): Promise<() => Promise<void>> {
    let callbacks = this.#channels.get(channel);
    const isNew = !callbacks;
    if (!callbacks) {
      callbacks = new Set();
      this.#channels.set(channel, callbacks);
    }
    callbacks.add(callback);
    if (!this.#client && !this.#connecting) await this.#connect();
    else if (this.#connecting) await this.#connecting;
    else if (isNew) await this.#client?.query(`LISTEN ${pg.escapeIdentifier(channel)}`).catch(() => this.#reconnect());
    return async () => {
      callbacks.delete(callback);
      if (callbacks.size > 0 || this.#channels.get(channel) !== callbacks) return;
      this.#channels.delete(channel);
      await this.#client?.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => {});
    };
  }

  #connect(): Promise<void> {
    this.#connecting = (async () => {
      const client = new pg.Client({ connectionString: this.#url, connectionTimeoutMillis: 5_000 });
      client.on('notification', (message) => {
        for (const callback of this.#channels.get(message.channel) ?? []) callback(message.payload ?? '');
      });
      client.on('error', () => this.#reconnect());
      client.on('end', () => this.#reconnect());
      try {
        await client.connect();
        for (const channel of this.#channels.keys()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
        this.#client = client;
      } catch {
        client.removeAllListeners('end');
        await client.end().catch(() => {});
        this.#scheduleRetry();
      } finally {
        this.#connecting = null;
      }
    })();
    return this.#connecting;
  }

  #reconnect(): void {
    const old = this.#client;
    this.#client = null;
    if (old) {
      old.removeAllListeners('end');
      old.end().catch(() => {});
    }
    this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retry) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (!this.#client && !this.#connecting) void this.#connect();
    }, 1_000);
    this.#retry.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    await this.#connecting;
    const client = this.#client;
    this.#client = null;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
    }
  }
}
