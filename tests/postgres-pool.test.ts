/**
 * The PostgreSQL pool under deep pipelining: a transaction whose BEGIN is queued behind ~100 other
 * statements on a busy connection must still get a connection of its own. With postgres.js's
 * default pipeline limit the BEGIN that fills a connection's pipeline is not reserved (the
 * transaction fails with UNSAFE_TRANSACTION and its server-side transaction stays open under other
 * statements); db/client.ts lifts the limit. PostgreSQL only: PGlite has one connection, no pool.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { postgresClient } from '../db/client.ts';
import { engine, freshDatabase, type TestDatabase } from './harness/databases.ts';

const onPostgres = engine === 'postgres';
let database: TestDatabase | undefined;
beforeAll(async () => {
  if (onPostgres) database = await freshDatabase();
});
afterAll(() => database?.close());

test.skipIf(!onPostgres)('a transaction queued behind a full pipeline gets its own connection and leaves none open', async () => {
  // Two connections: k statements alternate between them, so around k = 200 the BEGIN arrives as
  // the 100th pipelined statement of one of them (the boundary; k = 200 and 201 failed before).
  const client = postgresClient(database!.url!, 2);
  try {
    await Promise.all([client`select 1`, client`select 1`]);
    const failures: string[] = [];
    for (let k = 180; k <= 220; k++) {
      const statements = Array.from({ length: k }, () => client`select 1`.execute());
      const transaction = client.begin((tx) => tx`select 1`);
      const settled = await Promise.allSettled([...statements, transaction]);
      for (const result of settled) if (result.status === 'rejected') failures.push(`k=${k}: ${(result.reason as Error).message}`);
    }
    expect(failures).toEqual([]);
    const [open] = await client`select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`;
    expect(open!.n).toBe(0);
  } finally {
    await client.end({ timeout: 5 });
  }
});
