import { bandIssues, eventRecordSchema, idCollisions, type EventRecord } from '../server/events/event-schema.ts';
import { upsertEvents } from '../server/events/store.ts';
import type { SeedStep } from './step.ts';

export const EVENTS_FILE = new URL('./events/events.json', import.meta.url);

/** The 17 events, validated: schema, band rules, unique ids (ids, venue slugs and aliases together). Throws listing every problem. */
export async function loadEvents(): Promise<EventRecord[]> {
  const raw = (await Bun.file(EVENTS_FILE).json()) as unknown[];
  const problems: string[] = [];
  const records: EventRecord[] = [];
  raw.forEach((value, i) => {
    const parsed = eventRecordSchema.safeParse(value);
    if (!parsed.success) {
      problems.push(...parsed.error.issues.map((issue) => `event ${i + 1}: ${issue.path.join('.')}: ${issue.message}`));
      return;
    }
    problems.push(...bandIssues(parsed.data).map((issue) => `${parsed.data.id}: ${issue}`));
    records.push(parsed.data);
  });
  problems.push(...idCollisions(records));
  if (problems.length) throw new Error(`seeds/events/events.json is invalid:\n${problems.join('\n')}`);
  return records;
}

export const eventsSeed: SeedStep = {
  name: 'events',
  run: async (db) => upsertEvents(db, await loadEvents()),
};
