/**
 * `npm run import:companies -- FILE [FILE…]`: upserts companies by sourceId from JSON or CSV files.
 * Each file is all-or-nothing: one invalid row and nothing of that file is written. Prints a report
 * of rows added, updated and unchanged, and every invalid row with its line, field and reason.
 * Exit code 1 if any file was refused.
 */
import type { Db } from '../../db/client.ts';
import { validateRows } from '../companies/company-schema.ts';
import { ImportFileError, readImportFile } from '../companies/import-file.ts';
import { upsertCompanies, type UpsertReport } from '../companies/store.ts';
import { loadConfig } from '../config.ts';
import { closeServices, exitOnStartupFailure, openServices } from '../platform/start.ts';
import { createLogger } from '../lib/logger.ts';

export interface FileOutcome {
  file: string;
  written: boolean;
  report?: UpsertReport;
  invalid: Array<{ line: number; field: string; reason: string }>;
}

export async function importCompanyFile(
  db: Db,
  file: string,
  text: string,
  onProgress?: (done: number, total: number) => void,
): Promise<FileOutcome> {
  let rows;
  try {
    rows = readImportFile(file, text);
  } catch (error) {
    if (!(error instanceof ImportFileError)) throw error;
    return { file, written: false, invalid: [{ line: error.line, field: error.field, reason: error.reason }] };
  }
  const results = validateRows(rows, new Map(), file);
  const invalid = results.flatMap((r) => r.issues.map((issue) => ({ line: r.line, ...issue })));
  if (invalid.length) return { file, written: false, invalid };
  const records = results.map((r) => r.record!);
  const report = await upsertCompanies(db, records, (done) => onProgress?.(done, records.length));
  return { file, written: true, report, invalid: [] };
}

function progressBar(done: number, total: number) {
  if (!process.stderr.isTTY) return;
  const width = 30;
  const filled = total ? Math.round((done / total) * width) : width;
  process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
  if (done === total) process.stderr.write('\n');
}

if (import.meta.main) {
  const files = process.argv.slice(2);
  if (!files.length) {
    console.error('usage: import:companies FILE.json|FILE.csv [...]');
    process.exit(2);
  }
  const open = async () => {
    const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env });
    return openServices(config, { seed: false, logger: createLogger(config.logLevel, 'stderr') });
  };
  const services = await open().catch((error) => {
    exitOnStartupFailure(error); // a bad variable, a locked data directory, PostgreSQL not answering: one line
    throw error;
  });
  let refused = 0;
  try {
    for (const file of files) {
      const outcome = await importCompanyFile(services.database.db, file, await Bun.file(file).text(), progressBar);
      if (outcome.written) {
        const r = outcome.report!;
        console.log(`${file}: ${r.added} added, ${r.updated} updated, ${r.unchanged} unchanged`);
      } else {
        refused++;
        console.log(`${file}: refused, nothing written (${outcome.invalid.length} problem${outcome.invalid.length === 1 ? '' : 's'})`);
        for (const i of outcome.invalid) console.log(`  line ${i.line}: ${i.field}: ${i.reason}`);
      }
    }
  } finally {
    await closeServices(services);
  }
  process.exit(refused ? 1 : 0);
}
