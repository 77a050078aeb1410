/**
 * Opens the database: PostgreSQL through postgres.js when a postgres:// URL is given, otherwise the
 * embedded PGlite (a data directory, or memory). Both speak the same drizzle schema and migrations.
 */
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { restoreTemplate, templateFor } from './pglite-template.ts';
import * as schema from './schema.ts';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** Applies pending migrations from db/migrations (idempotent). */
  migrate(): Promise<void>;
  /**
   * Resolves when the database answers a trivial query; rejects if it fails or has not answered
   * within `timeoutMs` (default 1 s: a frozen database — connection up, no answers — must not hold
   * a readiness probe for the driver's own timeouts).
   */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
  /** Connections the pool may open, and statements and transactions in flight now (see countInFlight). */
  poolUsage(): PoolUsage;
}

export interface PoolUsage {
  size: number;
  inFlight: number;
}

/**
 * The client drizzle is given: the driver's own, with its two entry points counted — a statement
 * (postgres.js `unsafe`, PGlite `query`) and a transaction (`begin`, `transaction`: it holds one
 * connection for its whole length, and its statements run on that connection's own client, so they
 * are not counted again). Neither driver reports its pool: postgres.js pipelines statements onto busy
 * connections rather than queueing them (max_pipeline is unbounded here), and PGlite is one
 * connection. So with N in flight on a pool of S, min(N, S) connections are busy and the other N − S
 * wait behind another statement (metrics/index.ts). Calls go to the driver's client itself, so the
 * driver sees no difference; only drizzle's calls are counted (a ping is not).
 */
function countInFlight<C extends object>(client: C, statement: 'unsafe' | 'query', transaction: 'begin' | 'transaction'): { counted: C; inFlight: () => number } {
  let inFlight = 0;
  const settle = () => void inFlight--;
  const driver = client as unknown as Record<string, (...args: unknown[]) => PromiseLike<unknown>>;
  const counted = Object.create(client, {
    [statement]: {
      value: (...args: unknown[]) => {
        const pending = driver[statement]!.apply(client, args);
        inFlight++;
        // postgres.js runs a query once it is awaited, a tick later (after drizzle's `.values()`): this
        // `then` only makes that happen now, with the same options.
        pending.then(settle, settle);
        return pending;
      },
    },
    [transaction]: {
      value: (...args: unknown[]) => {
        inFlight++;
        const pending = driver[transaction]!.apply(client, args);
        pending.then(settle, settle);
        return pending;
      },
    },
  }) as C;
  return { counted, inFlight: () => inFlight };
}

export const migrationsFolder = new URL('./migrations', import.meta.url).pathname;

/** Sees every statement with its parameters (tests use it to check query plans). */
export type QueryObserver = (query: string, params: unknown[]) => void;

export type DatabaseTarget =
  | { kind: 'postgres'; url: string; poolSize?: number; onQuery?: QueryObserver }
  | { kind: 'pglite'; dataDir?: string; client?: PGlite; onQuery?: QueryObserver };

/** The postgres.js pool every PostgreSQL database of ours is opened with. */
export function postgresClient(url: string, poolSize: number) {
  const options = {
    max: poolSize,
    onnotice: () => {},
    // Fail fast when the server is unreachable instead of queueing requests for ever.
    connect_timeout: 5,
    // After failed connects postgres.js waits up to 20 s (exponential) before trying again, and
    // queries queue behind that wait: during an outage requests hung for up to 18 s. A short fixed
    // pause keeps every request's failure fast (503) and reconnects within 0.1 s of recovery,
    // while a down database sees at most pool-size connection attempts per pause.
    backoff: () => 0.1,
    // postgres.js 3.4.9 reserves a transaction's connection only if its BEGIN did not fill the
    // connection's pipeline: a BEGIN sent as the 100th pipelined query (the default limit) ran on a
    // connection left in the pool, the transaction failed with UNSAFE_TRANSACTION and the server-side
    // transaction stayed open under unrelated statements (porsager/postgres#1189, #823; seen here
    // under concurrent buys and sells). Without a limit that boundary is never reached; queries still
    // spread over the pool round-robin. tests/platform/postgres-pool.test.ts reproduces the boundary.
    // (A real option of postgres.js, missing from its type declarations.)
    max_pipeline: Number.MAX_SAFE_INTEGER,
    // Our statements are short reads and writes. PostgreSQL compiles a statement with LLVM once its
    // estimated cost passes jit_above_cost, and an estimate can be wrong by orders of magnitude: a
    // batch of usage pages, whose per-page LIMIT the planner cannot see, was estimated at 2 million
    // and spent 230 ms compiling to read 2 rows. Off for our connections (a session setting).
    connection: { jit: 'off' },
  };
  return postgres(url, options);
}

export const PING_TIMEOUT_MS = 1_000;

export class PingTimeout extends Error {
  override name = 'PingTimeout';
}

/** `work`'s outcome, or a PingTimeout after `ms`; the timer never outlives the race. */
async function within<T>(work: PromiseLike<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PingTimeout(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * postgres.js 3.4.9 starts every new connection with a query for the array types, and drops that
 * query's promise (porsager/postgres#1192, #1205, #1223; open): when the database goes away just as a
 * connection starts (an outage, a restart), the rejection is unhandled, which ends a Bun process —
 * tests/platform/db-outage.test.ts failed about one run in six on it. The types are the same for every
 * connection and are kept in the pool's shared options, so they are fetched once: by the first
 * query here, after which new connections skip the query. If the database does not answer now, the
 * first successful `ping` stops the fetching instead.
 */
async function fetchTypesOnce(client: postgres.Sql) {
  try {
    // Bounded like a ping: an unreachable host must not hold the start here (postgres.js's
    // connect_timeout did not fire under Bun for a host that drops packets: it waited for ever).
    await within(client`select 1`, PING_TIMEOUT_MS);
    stopFetchingTypes(client);
  } catch {
    // Not reachable yet: new connections keep fetching until a ping succeeds.
  }
}

/** After any successful query the array types are in the pool's shared options. */
function stopFetchingTypes(client: postgres.Sql) {
  client.options.fetch_types = false;
}

/**
 * PostgreSQL's shared buffers inside PGlite. Its default (initdb's 128MB) is allocated zero-filled in
 * the WebAssembly memory at start, so it is resident from the first second and never given back
 * (WebAssembly memory does not shrink): 125 MB of the 280 MB an idle embedded database took. Pages
 * not in the buffers are read from the data directory's files, which the kernel caches. Only memory
 * changes: what is written, and when, is as before. docs/performance.md has the measurements.
 */
export const PGLITE_SHARED_BUFFERS = '16MB';

/**
 * How the server opens its embedded database: PGlite's start parameters plus ours, and an empty
 * directory restored from the template first (pglite-template.ts: with `tar`, else by PGlite itself).
 */
export function pgliteOptions(dataDir: string | undefined): PGliteOptions {
  restoreTemplate(dataDir);
  return {
    dataDir,
    extensions: { pg_trgm },
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
    loadDataDir: templateFor(dataDir),
  };
}

export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  if (target.kind === 'postgres') {
    const poolSize = target.poolSize ?? 10;
    const client = postgresClient(target.url, poolSize);
    await fetchTypesOnce(client);
    const logger = target.onQuery ? { logQuery: target.onQuery } : undefined;
    const pool = countInFlight(client, 'unsafe', 'begin');
    const db = drizzlePostgres(pool.counted, { schema, logger }) as unknown as Db;
    return {
      db,
      kind: 'postgres',
      migrate: () => migratePostgres(db as never, { migrationsFolder }),
      ping: async (timeoutMs = PING_TIMEOUT_MS) => {
        await within(db.execute(sql`select 1`), timeoutMs);
        stopFetchingTypes(client);
      },
      close: () => client.end({ timeout: 5 }),
      poolUsage: () => ({ size: poolSize, inFlight: pool.inFlight() }),
    };
  }
  const dataDir = target.dataDir === ':memory:' || !target.dataDir ? undefined : target.dataDir;
  const client = target.client ?? new PGlite(pgliteOptions(dataDir));
  await client.waitReady;
  const logger = target.onQuery ? { logQuery: target.onQuery } : undefined;
  const pool = countInFlight(client, 'query', 'transaction');
  const db = drizzlePglite(pool.counted, { schema, logger }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    migrate: () => migratePglite(db as never, { migrationsFolder }),
    ping: async (timeoutMs = PING_TIMEOUT_MS) => void (await within(client.query('select 1'), timeoutMs)),
    close: () => client.close(),
    poolUsage: () => ({ size: 1, inFlight: pool.inFlight() }),
  };
}
