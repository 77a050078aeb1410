/**
 * Every procedure of a router, by dotted path, with the definition it was built from. Routers are
 * built with `router()` of trpc.ts, which records each router's own record of members here, so
 * the catalog is read from the objects the project wrote, not from tRPC's internals.
 */
import { definitionOf, type ProcedureDefinition } from './definition.ts';

const records = new WeakMap<object, Record<string, unknown>>();

export function recordRouter(router: object, record: Record<string, unknown>): void {
  records.set(router, record);
}

export interface CatalogEntry {
  /** Dotted path, e.g. `trading.buy`. */
  path: string;
  definition: ProcedureDefinition;
  procedure: object;
}

/** Every procedure under `router`, depth first in declaration order; throws for a member built some other way. */
export function catalogOf(router: object, prefix = ''): CatalogEntry[] {
  const record = records.get(router);
  if (!record) throw new Error(`catalog: ${prefix || 'the router'} was not built with router() of server/platform/procedures/trpc.ts`);
  const entries: CatalogEntry[] = [];
  for (const [name, member] of Object.entries(record)) {
    const path = prefix ? `${prefix}.${name}` : name;
    if (typeof member !== 'object' && typeof member !== 'function') continue;
    if (records.has(member as object)) {
      entries.push(...catalogOf(member as object, path));
      continue;
    }
    const definition = definitionOf(member as object);
    if (!definition) throw new Error(`catalog: ${path} was not built from a base procedure of server/platform/procedures/base.ts`);
    entries.push({ path, definition, procedure: member as object });
  }
  return entries;
}
