/**
 * `npm run import:companies -- FILE [FILE…]`: upserts companies by sourceId from JSON or CSV files.
 * Each file is all-or-nothing: one invalid row and nothing of that file is written. Prints a report
 * of rows added, updated and unchanged, and every invalid row with its line, field and reason.
 *
 *   --dataset          the built dataset (seeds/companies/*.json and seeds/investors.json): a running
 *                      server brought up to a new `npm run data:build` without a restart
 *   --investors FILE   investor facts in the shape of seeds/investors.json
 *   --account, --url   while a server holds the embedded database (remote.ts)
 *
 * On PostgreSQL, or on an embedded database no server holds, the command writes itself, a file in one
 * transaction. While a server holds the embedded database it goes through that server's operator
 * route POST /api/private-companies/import: each file is validated whole here first, then sent in
 * batches (IMPORT_BATCH_MAX records, under half a megabyte of JSON), each its own short transaction,
 * so the server keeps answering. A batch is an upsert, so a run cut short is finished by running it
 * again. Exit 1 if any file was refused, 2 for usage errors.
 */
import { readdirSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { Db } from '../../db/client.ts';
import { companyRowProblems, IMPORT_BATCH_MAX, importRecords, investorFactOf, investorFactRow, type ImportReport, type RowProblem } from '../companies/import.ts';
import type { CompanyRecord } from '../companies/company-schema.ts';
import { ImportFileError, readImportFile } from '../companies/import-file.ts';
import { upsertCompanies, type UpsertReport } from '../companies/store.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { createLogger } from '../lib/logger.ts';
import { EXIT, StartupError } from '../lib/startup-error.ts';
import type { Services } from '../platform/services.ts';
import { closeServices, exitOnStartupFailure, openServices } from '../platform/start.ts';
import { callServer, RemoteError, remoteServer, UsageError, type RemoteServer } from './remote.ts';

export interface FileOutcome {
  file: string;
  written: boolean;
  report?: UpsertReport;
  invalid: RowProblem[];
}

/** A file's rows validated whole: its records, or the problems that refuse it. */
export function readCompanyFile(file: string, text: string): { records: CompanyRecord[]; invalid: RowProblem[] } {
  try {
    const rows = readImportFile(file, text);
    const { records, problems } = companyRowProblems(rows.map((r) => r.value), file);
    // readImportFile numbers rows by their line in the file (a CSV record may span lines).
    return { records, invalid: problems.map((p) => ({ ...p, line: rows[p.line - 1]?.line ?? p.line })) };
  } catch (error) {
    if (!(error instanceof ImportFileError)) throw error;
    return { records: [], invalid: [{ line: error.line, field: error.field, reason: error.reason }] };
  }
}

export async function importCompanyFile(db: Db, file: string, text: string, onProgress?: (done: number, total: number) => void): Promise<FileOutcome> {
  const { records, invalid } = readCompanyFile(file, text);
  if (invalid.length) return { file, written: false, invalid };
  const report = await upsertCompanies(db, records, (done) => onProgress?.(done, records.length));
  return { file, written: true, report, invalid: [] };
}

/** Investor facts (seeds/investors.json's shape), every row checked. */
function readInvestorFile(file: string, text: string) {
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch {
    return { facts: [], invalid: [{ line: 0, field: 'file', reason: 'not JSON' }] };
  }
  const parsed = z.array(investorFactRow).safeParse(rows);
  if (parsed.success) return { facts: parsed.data, invalid: [] };
  return { facts: [], invalid: parsed.error.issues.map((i) => ({ line: typeof i.path[0] === 'number' ? i.path[0] + 1 : 0, field: i.path.slice(1).join('.') || 'row', reason: i.message })) };
}

/** Records in calls of at most IMPORT_BATCH_MAX and about half a megabyte (the server's body limit is 1 MB by default). */
function* batches<T>(rows: T[], maxBytes = 512 * 1024): Generator<{ rows: T[]; first: number }> {
  let start = 0;
  while (start < rows.length) {
    let end = start;
    let bytes = 0;
    while (end < rows.length && end - start < IMPORT_BATCH_MAX) {
      const size = JSON.stringify(rows[end]).length;
      if (end > start && bytes + size > maxBytes) break;
      bytes += size;
      end++;
    }
    yield { rows: rows.slice(start, end), first: start + 1 };
    start = end;
  }
}

/** Where the writes go: this process's own database, or the running server that holds it. */
type Target = { kind: 'local'; db: Db } | { kind: 'remote'; server: RemoteServer };

async function writeCompanies(target: Target, file: string, records: CompanyRecord[], onProgress: (done: number, total: number) => void): Promise<UpsertReport> {
  if (target.kind === 'local') return upsertCompanies(target.db, records, (done) => onProgress(done, records.length));
  const total: UpsertReport = { added: 0, updated: 0, unchanged: 0 };
  for (const batch of batches(records)) {
    const answer: ImportReport = await callServer(target.server, 'POST', '/private-companies/import', { companies: batch.rows, file: basename(file), firstLine: batch.first });
    for (const key of ['added', 'updated', 'unchanged'] as const) total[key] += answer[key];
    onProgress(batch.first - 1 + batch.rows.length, records.length);
  }
  return total;
}

async function writeInvestors(target: Target, facts: z.infer<typeof investorFactRow>[]): Promise<void> {
  if (target.kind === 'local') return void (await importRecords(target.db, [], facts.map(investorFactOf)));
  for (const batch of batches(facts)) await callServer(target.server, 'POST', '/private-companies/import', { investors: batch.rows });
}

function progressBar(done: number, total: number) {
  if (!process.stderr.isTTY) return;
  const width = 30;
  const filled = total ? Math.round((done / total) * width) : width;
  process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
  if (done === total) process.stderr.write('\n');
}

const DATASET_DIR = new URL('../../seeds/companies/', import.meta.url).pathname;
const DATASET_INVESTORS = new URL('../../seeds/investors.json', import.meta.url).pathname;

function refusedLine(file: string, invalid: RowProblem[]) {
  console.log(`${file}: refused, nothing written (${invalid.length} problem${invalid.length === 1 ? '' : 's'})`);
  for (const i of invalid) console.log(`  line ${i.line}: ${i.field}: ${i.reason}`);
}

if (import.meta.main) {
  let services: Services | undefined;
  let exitCode = 0;
  try {
    const { values, positionals } = parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: { dataset: { type: 'boolean' }, investors: { type: 'string' }, account: { type: 'string' }, url: { type: 'string' } },
    });
    const investorFiles = [...(values.dataset ? [DATASET_INVESTORS] : []), ...(values.investors ? [values.investors] : [])];
    const files = [...(values.dataset ? readdirSync(DATASET_DIR).filter((f) => f.endsWith('.json')).sort().map((f) => DATASET_DIR + f) : []), ...positionals];
    if (!files.length && !investorFiles.length) throw new UsageError('usage: import:companies FILE.json|FILE.csv [...] | --dataset | --investors FILE [--account ACCOUNT --url URL]');
    const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env });
    services = await openServices(config, { seed: false, logger: createLogger(config.logLevel, 'stderr') }).catch((error) => {
      if (error instanceof StartupError && error.exitCode === EXIT.tempfail && config.database.kind === 'pglite') return undefined;
      throw error;
    });
    const target: Target = services ? { kind: 'local', db: services.database.db } : { kind: 'remote', server: remoteServer(config, values, 'a running server holds the embedded database, so the import goes through it') };
    // Investor facts first: the records' rounds then link to described investors.
    for (const file of investorFiles) {
      const { facts, invalid } = readInvestorFile(file, await Bun.file(file).text());
      if (invalid.length) {
        exitCode = 1;
        refusedLine(file, invalid);
        continue;
      }
      await writeInvestors(target, facts);
      console.log(`${file}: ${facts.length} investor facts written`);
    }
    for (const file of files) {
      const { records, invalid } = readCompanyFile(file, await Bun.file(file).text());
      if (invalid.length) {
        exitCode = 1;
        refusedLine(file, invalid);
        continue;
      }
      const r = await writeCompanies(target, file, records, progressBar);
      console.log(`${file}: ${r.added} added, ${r.updated} updated, ${r.unchanged} unchanged`);
    }
  } catch (error) {
    exitOnStartupFailure(error); // a bad variable, PostgreSQL not answering: one line
    const code = (error as { code?: string }).code ?? '';
    const usage = error instanceof UsageError || error instanceof ConfigError || code.startsWith('ERR_PARSE_ARGS');
    console.error(usage || error instanceof RemoteError || code === 'ENOENT' ? (error as Error).message : error);
    exitCode = usage ? 2 : 1;
  } finally {
    if (services) await closeServices(services);
  }
  process.exit(exitCode);
}
