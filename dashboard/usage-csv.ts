/**
 * The usage page's CSV export: every record the filters match, fetched page by page from
 * usage.list, written as RFC 4180 CSV (CRLF line ends, fields quoted when they need it) in the
 * order the API returns them (newest first), and handed to the browser as a Blob download.
 */
import type { Inputs, Outputs } from './trpc.ts';

export type UsageRecord = Outputs['usage']['list']['records'][number];
export type UsageListInput = Exclude<Inputs['usage']['list'], void | undefined>;
export type UsageFilters = Omit<UsageListInput, 'limit' | 'offset'>;
type ListPage = { records: UsageRecord[]; total: number };

export const CSV_HEADER = ['id', 'timestamp', 'method', 'path', 'keyId', 'costUsd', 'currency'] as const;

/** The most usage.list returns at once, and the largest offset it takes. */
export const EXPORT_PAGE_SIZE = 10_000;
const MAX_OFFSET = 10_000_000;

/** One CSV field: quoted (inner quotes doubled) when it holds a comma, a quote or a line break. */
export function csvField(value: string | number | null): string {
  const text = value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The file: the header, then one line per record in the given order. costUsd as the API gave it. */
export function usageCsv(records: readonly UsageRecord[]): string {
  const lines = [CSV_HEADER.join(',')];
  for (const r of records) lines.push([r.id, r.timestamp, r.method, r.path, r.keyId, r.costUsd, r.currency].map(csvField).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Every record matching `filters`, newest first: pages of `pageSize` until the total is reached.
 * Requests billed while it pages are newer than every record already read, so they only push older
 * records down a page: a record seen twice is kept once, and the export is the set as of its first page.
 */
export async function fetchAllUsage(list: (input: UsageListInput) => Promise<ListPage>, filters: UsageFilters, pageSize = EXPORT_PAGE_SIZE): Promise<UsageRecord[]> {
  const seen = new Set<string>();
  const records: UsageRecord[] = [];
  for (let offset = 0; ; offset += pageSize) {
    if (offset > MAX_OFFSET) throw new Error('More than 10,000,000 requests match: narrow the dates, key or route and export in parts.');
    const page = await list({ ...filters, limit: pageSize, offset });
    for (const record of page.records) {
      if (seen.has(record.id)) continue;
      seen.add(record.id);
      records.push(record);
    }
    if (page.records.length < pageSize || offset + pageSize >= page.total) return records;
  }
}

/** Saves `text` as a file: a Blob behind a temporary <a download> (no inline script, no new window). */
export function downloadText(fileName: string, text: string, type = 'text/csv;charset=utf-8'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the URL by now; released on the next task.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
