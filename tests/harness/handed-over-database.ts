/**
 * A database a test hands over to the server processes it starts and kills (the kill -9 tests): a
 * fresh PostgreSQL database on the PostgreSQL run, else a PGlite data directory, migrated and seeded,
 * which one process holds at a time — so the test opens it only between processes and closes it
 * again (`use`). `env` is what a server process needs to find it.
 */
import { join } from 'node:path';
import { openDatabase, type Database } from '../../db/client.ts';
import { seedDatabase } from '../../seeds/index.ts';
import { createLogger } from '../../server/lib/logger.ts';
import { engine, freshDatabase } from './databases.ts';

export interface HandedOverDatabase {
  env: { DATABASE_URL: string } | { DATA_DIR: string };
  /** Runs `work` on the database while no server process holds it. */
  use<T>(work: (db: Database) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function handedOverDatabase(scratch: string): Promise<HandedOverDatabase> {
  if (engine === 'postgres') {
    const pg = await freshDatabase();
    return { env: { DATABASE_URL: pg.url! }, use: (work) => work(pg), close: () => pg.close() };
  }
  const dataDir = join(scratch, 'data');
  const use = async <T>(work: (db: Database) => Promise<T>) => {
    const db = await openDatabase({ kind: 'pglite', dataDir });
    try {
      return await work(db);
    } finally {
      await db.close();
    }
  };
  await use(async (db) => {
    await db.migrate();
    await seedDatabase(db.db, createLogger('silent'));
  });
  return { env: { DATA_DIR: dataDir }, use, close: async () => {} };
}
