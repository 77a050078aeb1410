/**
 * Candle backfill from the command line (server/history/backfill.ts, docs/history.md). One JSON line
 * per event on stdout; exit 1 if any event had problems, 2 for usage errors.
 *
 *   bun server/commands/backfill-history.ts --interval 1h --from 2026-11-01 [--to 2026-11-20T12:00Z]
 *       [--event openai-ipo …] [--venue paper|polymarket] [--step-seconds 60] [--fidelity 1]
 *       [--account ACCOUNT] [--url http://localhost:3000]
 *
 * While a server holds the embedded database (exit 75 for every other command), the backfill goes
 * through that server (backfill-remote.ts): DASHBOARD_KEYS as the server's, --account naming the
 * operator's own account (as for every operator route), the server at --url, else $BASE, else
 * $PUBLIC_URL, else http://localhost:$PORT (3000). On PostgreSQL the command writes itself.
 */
import { parseArgs } from 'node:util';
import { parseIsoInstant } from '../../routers/params.ts';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { createLogger } from '../lib/logger.ts';
import type { Services } from '../platform/services.ts';
import { closeServices, exitOnStartupFailure, openServices } from '../platform/start.ts';
import { backfillCandles } from '../history/backfill.ts';
import { INTERVALS, type CandleInterval } from '../history/candles.ts';
import { EXIT, StartupError } from '../lib/startup-error.ts';
import { backfillThroughServer } from './backfill-remote.ts';
import { RemoteError, remoteServer, UsageError } from './remote.ts';

function instant(name: string, text: string | undefined, endOfDay = false): Date | undefined {
  if (text === undefined) return undefined;
  const parsed = parseIsoInstant(text, { endOfDay });
  if (typeof parsed === 'string') throw new UsageError(`--${name}: ${parsed}`);
  return parsed;
}

function whole(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`--${name}: must be a whole number from 1`);
  return Number(text);
}

/** The running server to ask (remote.ts); it backfills on the venue it runs. */
function remoteFor(config: Config, values: { account?: string; url?: string; venue?: string }) {
  const why = 'a running server holds the embedded database, so the backfill goes through it';
  if (values.venue !== undefined) throw new UsageError(`--venue: ${why}, on the venue it runs (leave --venue out)`);
  return remoteServer(config, values, why);
}

if (import.meta.main) {
  let exitCode = 0;
  let services: Services | undefined;
  try {
    const { values } = parseArgs({
      args: process.argv.slice(2),
      options: {
        interval: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        event: { type: 'string', multiple: true },
        venue: { type: 'string' },
        'step-seconds': { type: 'string' },
        fidelity: { type: 'string' },
        account: { type: 'string' },
        url: { type: 'string' },
      },
    });
    const interval = values.interval as CandleInterval;
    if (!INTERVALS.includes(interval)) throw new UsageError('--interval: one of 1m, 1h, 1d');
    const from = instant('from', values.from);
    if (!from) throw new UsageError('--from: required (an ISO 8601 date or date-time)');
    if (values.venue !== undefined && values.venue !== 'paper' && values.venue !== 'polymarket') throw new UsageError('--venue: paper or polymarket');
    const step = whole('step-seconds', values['step-seconds']);
    const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env });
    const to = instant('to', values.to, true);
    const fidelity = whole('fidelity', values.fidelity);
    const stepMs = step === undefined ? undefined : step * 1000;
    services = await openServices(config, { seed: false, logger: createLogger(config.logLevel, 'stderr') }).catch((error) => {
      if (error instanceof StartupError && error.exitCode === EXIT.tempfail && config.database.kind === 'pglite') return undefined;
      throw error;
    });
    const lines = services
      ? await backfillCandles(services, { interval, from, to, events: values.event, venue: values.venue as 'paper' | 'polymarket' | undefined, stepMs, fidelity })
      : await backfillThroughServer({ ...remoteFor(config, values), interval, from, to: to ?? new Date(), events: values.event, stepMs, fidelity });
    for (const line of lines) console.log(JSON.stringify(line));
    if (lines.some((l) => l.problems.length)) exitCode = 1;
  } catch (error) {
    exitOnStartupFailure(error);
    if (error instanceof RemoteError) {
      console.error(error.message);
      process.exit(1);
    }
    const usage = error instanceof UsageError || error instanceof ConfigError || error instanceof RangeError || (error as Error).name === 'TypeError';
    exitCode = usage ? 2 : 1;
    console.error(error instanceof Error && usage ? error.message : error);
  } finally {
    if (services) await closeServices(services);
  }
  process.exit(exitCode);
}
