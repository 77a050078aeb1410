/**
 * Candle backfill from the command line (server/history/backfill.ts, docs/history.md). One JSON line
 * per event on stdout; exit 1 if any event had problems, 2 for usage errors.
 *
 *   bun server/commands/backfill-history.ts --interval 1h --from 2026-11-01 [--to 2026-11-20T12:00Z]
 *       [--event openai-ipo …] [--venue paper|polymarket] [--step-seconds 60] [--fidelity 1]
 */
import { parseArgs } from 'node:util';
import { parseIsoInstant } from '../../routers/params.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { createLogger } from '../lib/logger.ts';
import type { Services } from '../platform/services.ts';
import { closeServices, exitOnStartupFailure, openServices } from '../platform/start.ts';
import { backfillCandles } from '../history/backfill.ts';
import { INTERVALS, type CandleInterval } from '../history/candles.ts';

class UsageError extends Error {}

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
      },
    });
    const interval = values.interval as CandleInterval;
    if (!INTERVALS.includes(interval)) throw new UsageError('--interval: one of 1m, 1h, 1d');
    const from = instant('from', values.from);
    if (!from) throw new UsageError('--from: required (an ISO 8601 date or date-time)');
    if (values.venue !== undefined && values.venue !== 'paper' && values.venue !== 'polymarket') throw new UsageError('--venue: paper or polymarket');
    const step = whole('step-seconds', values['step-seconds']);
    const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env });
    services = await openServices(config, { seed: false, logger: createLogger(config.logLevel, 'stderr') });
    const lines = await backfillCandles(services, {
      interval,
      from,
      to: instant('to', values.to, true),
      events: values.event,
      venue: values.venue as 'paper' | 'polymarket' | undefined,
      stepMs: step === undefined ? undefined : step * 1000,
      fidelity: whole('fidelity', values.fidelity),
    });
    for (const line of lines) console.log(JSON.stringify(line));
    if (lines.some((l) => l.problems.length)) exitCode = 1;
  } catch (error) {
    exitOnStartupFailure(error);
    const usage = error instanceof UsageError || error instanceof ConfigError || error instanceof RangeError || (error as Error).name === 'TypeError';
    exitCode = usage ? 2 : 1;
    console.error(error instanceof Error && usage ? error.message : error);
  } finally {
    if (services) await closeServices(services);
  }
  process.exit(exitCode);
}
