/**
 * A read that many requests make at the same moment, answered by one prepared statement over a JSON
 * array of their parameters (batch-queue.ts). The statement takes the array as its `pages`
 * placeholder, each element with its position `ord`, and answers rows that carry their request's
 * `ord`; each request gets its own rows back, in the statement's order. Every request's filter (its
 * account, its user) is in its own element, so sharing a statement never shares an answer.
 */
import type { SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { preparedSql } from '../../db/prepared.ts';
import { isDatabaseUnavailable } from '../errors.ts';
import { BatchQueue } from './batch-queue.ts';

export interface BatchedRead<Request, Row> {
  /** The rows of this request, once its batch has answered. */
  read(db: Db, request: Request): Promise<Row[]>;
}

/** `name` names the prepared statement; `max` is the most requests one statement takes. */
export function batchedRead<Request extends object, Row extends { ord: number | string }>(name: string, query: SQL, max: number): BatchedRead<Request, Row> {
  const queues = new WeakMap<Db, BatchQueue<Request, Row[]>>();
  return {
    read(db, request) {
      let queue = queues.get(db);
      if (!queue) {
        const statement = preparedSql<Row>(db, name, query);
        queue = new BatchQueue(
          async (requests) => {
            const rows = await statement.execute({ pages: JSON.stringify(requests.map((r, ord) => ({ ord, ...r }))) });
            const byOrd: Row[][] = requests.map(() => []);
            for (const row of rows) byOrd[Number(row.ord)]!.push(row);
            return byOrd.map((value) => ({ value }));
          },
          { concurrent: 2, max, failsEveryone: isDatabaseUnavailable },
        );
        queues.set(db, queue);
      }
      return queue.add(request);
    },
  };
}
