/**
 * The company export (GET /api/private-companies/export): every company the list's filters match,
 * once each, in id order, as its full detail record (answers.ts `companyDetail`; no markets: those
 * are live market data, not the record), written as NDJSON or CSV while it is read.
 *
 * Memory does not grow with the dataset: rows are read in keyset batches (`id > last id of the
 * previous batch`, EXPORT_BATCH_ROWS at a time, each its own short query, so no transaction or
 * connection is held while the client reads: PGlite has only the one), and a batch is read only when
 * the reader has taken the previous one (a pull stream). A company changed during the export is
 * written as it is when its batch is read; one added with a higher id than the batch read last is
 * written too.
 *
 * Billing is per started thousand rows (ROWS_PER_UNIT), counted before the first byte: the router
 * states `exportUnits(countExport(…))` to the billing gate, which reserves them all. The stream pays
 * as it writes (`paid`, accounts/unit-charges.ts): each batch is covered before it is written, and
 * when the stream ends — read to the end, cancelled, failed — the units it did not write are returned.
 */
import { and, asc, count, getTableColumns, gt } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { companies } from '../../db/schema.ts';
import type { Cached } from './aggregate-cache.ts';
import { companyDetail } from './answers.ts';
import { filterWhere, type Company, type ListFilters } from './queries.ts';

export const EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: 'application/x-ndjson',
  csv: 'text/csv; charset=utf-8',
};

/** Rows per keyset read. */
export const EXPORT_BATCH_ROWS = 500;
/** Rows per billed unit (one private-company request's price). */
export const ROWS_PER_UNIT = 1000;

/**
 * The units an export of `rows` rows costs: each started thousand, and at least one. An export that
 * matches nothing still answers a question about the data (that nothing matches these filters),
 * which the list sells at one request's price.
 */
export function exportUnits(rows: number): number {
  return Math.max(1, Math.ceil(rows / ROWS_PER_UNIT));
}

/** How many companies the filters match (after `afterId`; the unfiltered count from the aggregate cache, as the list's). */
export async function countExport(db: Db, { cache, version }: Cached, filters: ListFilters, afterId = 0): Promise<number> {
  const where = and(filterWhere(filters), afterId > 0 ? gt(companies.id, afterId) : undefined);
  const countMatching = async () => (await db.select({ total: count() }).from(companies).where(where))[0]?.total ?? 0;
  return where ? countMatching() : cache.aggregate(db, 'count', countMatching, version);
}

/** The record a line or a CSV row holds: the detail, without markets. */
export const exportRecord = (c: Company) => companyDetail(c);

/**
 * The record's field names, in the order of the detail (the CSV header): read off the detail of an
 * empty row, since the detail answers every field whatever its value.
 */
function recordFields(): string[] {
  const empty = Object.fromEntries(Object.keys(getTableColumns(companies)).map((k) => [k, null])) as unknown as Company;
  const epoch = new Date(0);
  return Object.keys(exportRecord({ ...empty, createdAt: epoch, updatedAt: epoch }));
}

/**
 * One CSV cell (RFC 4180): null is an empty cell, an empty text `""` (so the two stay apart), lists
 * and objects their JSON text; a cell holding a comma, a quote, CR or LF is quoted, quotes doubled.
 * A text that a spreadsheet would run as a formula (it starts with = + - @, a tab or CR) gets a
 * leading `'`, as OWASP advises for CSV files opened in Excel or Sheets: a company name is data, never
 * a formula. Numbers are written as they are.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const written = typeof value === 'object' ? JSON.stringify(value) : String(value);
  const text = typeof value === 'string' && /^[=+\-@\t\r]/.test(value) ? `'${written}` : written;
  if (text === '') return '""';
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const csvRow = (cells: unknown[]) => `${cells.map(csvCell).join(',')}\r\n`;

/** The rows after `afterId` that the filters match, in id order: one keyset batch. */
function batchAfter(db: Db, filters: ListFilters, afterId: number, limit: number): Promise<Company[]> {
  return db.select().from(companies).where(and(filterWhere(filters), gt(companies.id, afterId))).orderBy(asc(companies.id)).limit(limit);
}

export interface ExportFile {
  body: ReadableStream<Uint8Array>;
  contentType: string;
  /** companies-<UTC date>.<format>, for Content-Disposition. */
  filename: string;
}

export interface ExportOptions {
  batchRows?: number;
  /** The day in the file name (default: today, UTC). */
  now?: Date;
  /** Hears a failure while streaming (the body then ends with an error: the client sees it cut short). */
  onError?: (error: unknown) => void;
  /** Only rows with a higher id (a cut export continued from the last id received). */
  afterId?: number;
  /** What the rows cost as they are written (by default nothing: a caller that does not bill). */
  paid?: PaidAsWritten;
}

/** The export's units as it writes them: covered before each batch, settled once it has ended (accounts/unit-charges.ts). */
export interface PaidAsWritten {
  /** False: the unit is gone (it lapsed): write nothing more. */
  cover(units: number): Promise<boolean>;
  settle(): Promise<void>;
}

/** Thrown into the stream when a unit lapsed before its rows were written (the reader stalled past UNIT_LEASE_MS). */
export class ExportLapsed extends Error {
  constructor() {
    super('the rest of this export was refunded after its reader stalled; continue it with afterId');
  }
}

/**
 * The export as a stream: a batch is read when the reader wants more (nothing is read ahead of it
 * but the one chunk the stream queues), each batch written as one chunk; CSV starts with its header.
 * A reader that goes away (cancel) stops the reads.
 */
export function exportFile(db: Db, filters: ListFilters, format: ExportFormat, options: ExportOptions = {}): ExportFile {
  const batchRows = options.batchRows ?? EXPORT_BATCH_ROWS;
  const encoder = new TextEncoder();
  const fields = format === 'csv' ? recordFields() : [];
  const line =
    format === 'csv'
      ? (c: Company) => {
          const record = exportRecord(c) as Record<string, unknown>;
          return csvRow(fields.map((f) => record[f]));
        }
      : (c: Company) => `${JSON.stringify(exportRecord(c))}\n`;
  let afterId = options.afterId ?? 0;
  let written = 0;
  let done = false;
  const finish = async () => {
    done = true;
    await options.paid?.settle();
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        if (format === 'csv') controller.enqueue(encoder.encode(csvRow(fields)));
      },
      async pull(controller) {
        if (done) return;
        try {
          const rows = await batchAfter(db, filters, afterId, batchRows);
          if (done) return; // cancelled while the batch was read
          if (rows.length > 0) {
            // Paid for before it is written: a lapsed unit (the reader stalled past the lease) ends the file here.
            if (options.paid && !(await options.paid.cover(Math.ceil((written + rows.length) / ROWS_PER_UNIT)))) throw new ExportLapsed();
            written += rows.length;
            afterId = rows[rows.length - 1]!.id;
            controller.enqueue(encoder.encode(rows.map(line).join('')));
          }
          if (rows.length < batchRows) {
            await finish();
            controller.close();
          }
        } catch (error) {
          await finish();
          options.onError?.(error);
          controller.error(error);
        }
      },
      cancel: finish,
    },
    { highWaterMark: 1 },
  );
  const day = (options.now ?? new Date()).toISOString().slice(0, 10);
  return { body, contentType: EXPORT_CONTENT_TYPES[format], filename: `companies-${day}.${format}` };
}
