/**
 * Reads a company file for import: a JSON array of records, or CSV whose header names record fields.
 * In CSV, an empty cell is null, number fields are decimal numbers, and list or object fields
 * (products, fundingHistory, marketSegments, extra, …) hold JSON.
 */
import { parseCsv } from '../lib/csv.ts';
import { COMPANY_FIELDS, companyRecordSchema } from './company-schema.ts';
import { errorMessage } from '../lib/error-message.ts';

export interface SourceRow {
  line: number;
  value: unknown;
}

type Kind = 'string' | 'number' | 'json';

/** What a CSV cell of each field holds, read off the record schema itself. */
const FIELD_KINDS: Record<string, Kind> = Object.fromEntries(
  COMPANY_FIELDS.map((field) => {
    let schema: any = companyRecordSchema.shape[field];
    while (['optional', 'nullable'].includes(schema._zod.def.type)) schema = schema._zod.def.innerType;
    const type = schema._zod.def.type;
    return [field, type === 'number' ? 'number' : type === 'array' || type === 'object' ? 'json' : 'string'];
  }),
);

/** A file that cannot be read as rows at all; `line` 0 means the whole file. */
export class ImportFileError extends Error {
  constructor(
    readonly line: number,
    readonly field: string,
    readonly reason: string,
  ) {
    super(`line ${line}: ${field}: ${reason}`);
  }
}

function cellValue(field: string, raw: string, line: number): unknown {
  if (raw.trim() === '') return null;
  switch (FIELD_KINDS[field]) {
    case 'number':
      return /^-?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw.trim()) : raw; // a non-number stays text and fails validation
    case 'json':
      try {
        return JSON.parse(raw);
      } catch {
        throw new ImportFileError(line, field, 'is not valid JSON');
      }
    default:
      return raw;
  }
}

export function readCsvRows(text: string): SourceRow[] {
  let parsed;
  try {
    parsed = parseCsv(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ImportFileError(0, 'file', errorMessage(error));
  }
  const [header, ...records] = parsed;
  if (!header) return [];
  const unknown = header.cells.filter((h) => !Object.hasOwn(FIELD_KINDS, h));
  if (unknown.length) throw new ImportFileError(1, unknown.join(', '), 'unknown column');
  return records.map(({ line, cells }) => {
    if (cells.length !== header.cells.length) throw new ImportFileError(line, 'row', `${cells.length} cells, the header has ${header.cells.length}`);
    const value: Record<string, unknown> = {};
    header.cells.forEach((field, i) => (value[field] = cellValue(field, cells[i]!, line)));
    return { line, value };
  });
}

export function readJsonRows(text: string): SourceRow[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ImportFileError(0, 'file', `not valid JSON: ${errorMessage(error)}`);
  }
  if (!Array.isArray(parsed)) throw new ImportFileError(0, 'file', 'a JSON import file must hold an array of company records');
  return parsed.map((value, i) => ({ line: i + 1, value }));
}

export function readImportFile(path: string, text: string): SourceRow[] {
  if (/\.csv$/i.test(path)) return readCsvRows(text);
  if (/\.json$/i.test(path)) return readJsonRows(text);
  throw new ImportFileError(0, 'file', 'the file name must end in .json or .csv');
}
