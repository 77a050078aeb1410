/**
 * The dataset version, and what is kept per version. Aggregates over the whole dataset are costly at
 * a million rows, and a company's detail or a page is read far more often than it changes; both change
 * only when the dataset does, and every import or update moves the version in the transaction that
 * writes it (bumpDatasetVersion), so whatever this process computed under a version stays true until
 * the version moves, on whichever instance moved it.
 */
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { companyDatasetState } from '../../db/schema.ts';
import { deepFreeze, markReusable } from '../lib/reusable-json.ts';

export async function datasetVersion(db: Db): Promise<number> {
  const [row] = await db.select({ version: companyDatasetState.version }).from(companyDatasetState).where(eq(companyDatasetState.id, 1));
  return row?.version ?? 0;
}

/** Called inside the transaction that changed companies. */
export async function bumpDatasetVersion(db: Db): Promise<void> {
  await db
    .insert(companyDatasetState)
    .values({ id: 1, version: 1 })
    .onConflictDoUpdate({ target: companyDatasetState.id, set: { version: sql`${companyDatasetState.version} + 1`, changedAt: sql`now()` } });
}

/** Answers kept at most (a company detail is ~5 KB as JSON, kept as objects and text: ~30 MB at the bound). */
export const MAX_ANSWERS = 2_000;

/**
 * What is computed once per dataset version, in this process: the aggregates (stats, industries,
 * countries, the unfiltered total and the id anchors: a few, each costly at a million rows) and the
 * answers (a company's detail, a page, its rounds: many, each cheap but read often). A new version
 * drops everything at once.
 *
 * The version a request is answered under is the one its admission statement read
 * (accounts/admission-queue.ts) when it has one, so an answer is never older than the request, on
 * any instance, and the check costs no round trip; otherwise it is read here (one indexed row). A
 * request that carries an older version than the cache's (one admitted just before an import) is
 * answered without the cache.
 *
 * An answer is frozen and marked reusable (lib/reusable-json.ts): the procedure runner checks it
 * against the output schema once and the REST bridge serializes it once, so a repeat costs neither.
 * Answers are bounded (MAX_ANSWERS, the least recently used dropped first); aggregates are not.
 */
/** A cache and the version a request is answered under (its admission's; undefined: read it). */
export interface Cached {
  cache: DatasetCache;
  version?: number;
}

export class DatasetCache {
  private version = -1;
  private aggregates = new Map<string, Promise<unknown>>();
  private answers = new Map<string, Promise<object>>();

  constructor(private readonly maxAnswers = MAX_ANSWERS) {}

  /** Whether `version` may use the cache (it is the cache's, or newer: then the cache starts over). */
  private current(version: number): boolean {
    if (version < this.version) return false;
    if (version > this.version) {
      this.version = version;
      this.aggregates.clear();
      this.answers.clear();
    }
    return true;
  }

  /**
   * A costly aggregate; concurrent misses share one computation, a failed one is not kept. An object
   * (an answer such as the stats) is frozen and reusable like an answer.
   */
  async aggregate<T>(db: Db, name: string, compute: () => Promise<T>, version?: number): Promise<T> {
    if (!this.current(version ?? (await datasetVersion(db)))) return compute();
    return keep(this.aggregates, name, () => compute().then(reusable)) as Promise<T>;
  }

  /** An answer, frozen and reusable; kept up to MAX_ANSWERS, most recently used last out. */
  async answer<T extends object>(db: Db, key: string, compute: () => Promise<T>, version?: number): Promise<T> {
    if (!this.current(version ?? (await datasetVersion(db)))) return compute();
    const kept = this.answers.get(key);
    if (kept) {
      this.answers.delete(key);
      this.answers.set(key, kept);
      return kept as Promise<T>;
    }
    const answer = keep(this.answers, key, () => compute().then(reusable));
    if (this.answers.size > this.maxAnswers) this.answers.delete(this.answers.keys().next().value!);
    return answer as Promise<T>;
  }
}

const reusable = <T>(value: T): T => (typeof value === 'object' && value !== null ? markReusable(deepFreeze(value)) : value);

function keep<T>(map: Map<string, Promise<T>>, key: string, compute: () => Promise<T>): Promise<T> {
  const kept = map.get(key);
  if (kept) return kept;
  const value = compute();
  map.set(key, value);
  value.catch(() => map.get(key) === value && map.delete(key));
  return value;
}
