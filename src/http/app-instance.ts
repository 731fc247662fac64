// What a route module sees of the app: the Fastify instance with the dependencies buildApp() was given (src/http/app.ts).
// Apart from app.ts so that the routes, which app.ts registers, do not import it back.
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { CpuPool } from '../cpu/pool.ts';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import type { KeyVerifier, LastUsedRecorder } from '../domain/keys/keys.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { RunEventHub } from './run-event-hub.ts';

export interface AppDeps {
  config: Config;
  database: Database;
  db: Kysely<DB>;
  clock: Clock;
  keys: KeyVerifier;
  lastUsed: LastUsedRecorder;
  metrics: Metrics;
  runEvents: RunEventHub;
  /** Where CPU work over untrusted input runs (a lead import's file): worker threads, never the event loop. */
  cpu: CpuPool;
  /** The key that seals stored mail passwords (src/domain/secret-box.ts), read or made on first use. */
  secrets: () => SecretBox;
}

export type AppInstance = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider> & {
  deps: AppDeps;
};

export interface RouteEntry {
  method: string;
  url: string;
  scope: string | null;
  /** For the web UI's routes: who may use them (a session). */
  access: 'signed-in' | 'admin' | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
    /** Every route with the scope it needs, so tests can cover each route without anyone listing them. */
    routeTable: RouteEntry[];
  }
}
