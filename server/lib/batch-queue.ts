/**
 * Many small statements as one. Callers add items; the items waiting when a statement slot is free
 * leave together as one batch, which `runBatch` answers in one round trip (a statement over a JSON
 * array of the items). A process's requests reach the database in bursts — every request of an
 * admission batch resumes in the same turn of the event loop — so a burst becomes one statement
 * instead of one statement per request: one socket write, one executor start and one wake-up of a
 * database backend for all of them (the driver's socket writes were the largest share of the
 * server's CPU for a page of usage: docs/performance.md).
 *
 * A batch leaves in the next turn of the event loop after its first item arrived (so everything that
 * resumes in the same turn joins it), or, while `concurrent` batches are in the database, as soon as
 * one of them answers. There is no timer: an idle queue adds a turn of the loop, not a wait.
 */

/** What a batch says of one item: its value, or `again` (it goes into the next batch). */
export type BatchAnswer<R> = { value: R } | { again: true };

export interface BatchOptions {
  /** Batches in the database at once, at most. */
  concurrent: number;
  /** Items in one batch, at most. */
  max: number;
  /**
   * An error after which the items still waiting would fail the same way (the database is
   * unreachable): they are failed at once instead of each waiting out the same timeout.
   */
  failsEveryone?(error: unknown): boolean;
}

interface Waiting<T, R> {
  item: T;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export class BatchQueue<T, R> {
  private waiting: Array<Waiting<T, R>> = [];
  private inFlight = 0;
  private scheduled = false;

  /** `runBatch` answers one entry per item, in the items' order. */
  constructor(
    private readonly runBatch: (items: T[]) => Promise<Array<BatchAnswer<R>>>,
    private readonly options: BatchOptions,
  ) {}

  /** Resolves with the item's value once its batch has answered (rejects with the batch's error). */
  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.drain();
        });
      }
    });
  }

  private drain() {
    while (this.waiting.length && this.inFlight < this.options.concurrent) {
      const taken = this.waiting.splice(0, this.options.max);
      this.inFlight++;
      void this.run(taken).finally(() => {
        this.inFlight--;
        this.drain();
      });
    }
  }

  private async run(taken: Array<Waiting<T, R>>) {
    let answers: Array<BatchAnswer<R>>;
    try {
      answers = await this.runBatch(taken.map((w) => w.item));
    } catch (error) {
      const failed = this.options.failsEveryone?.(error) ? [...taken, ...this.waiting.splice(0)] : taken;
      for (const w of failed) w.reject(error);
      return;
    }
    taken.forEach((w, i) => {
      const answer = answers[i];
      if (!answer) return w.reject(new Error('batch answered fewer entries than it was given'));
      if ('again' in answer) this.waiting.push(w);
      else w.resolve(answer.value);
    });
  }
}
