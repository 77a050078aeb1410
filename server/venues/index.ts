import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { preparedSql } from '../../db/prepared.ts';
import { createPolygonClient, createPositionReader } from '../chain/position-reader.ts';
import type { Config } from '../config.ts';
import { PaperVenue } from './paper.ts';
import { ClobHttp } from './polymarket/clob-http.ts';
import { TokenMap } from './polymarket/token-map.ts';
import { Redeemer, REDEMPTION_CONTRACTS } from './polymarket/redeemer.ts';
import { RelayerHttp } from './polymarket/relayer-http.ts';
import { createRedemptionChain } from '../chain/redemption-chain.ts';
import { PolymarketVenue } from './polymarket/venue.ts';
import type { Venue } from './venue.ts';
import { parseLadderTokenId } from '../valuation/index.ts';
import { coalesced } from '../lib/coalesce.ts';

/** The venue named by VENUE. The paper venue centres its books on the bands' seed prices. */
export function createVenue(config: Config, db: Db, now?: () => number): Venue {
  if (config.venue === 'polymarket') {
    const { clobUrl, polygonRpcUrl, relayerUrl, builder } = config.polymarket;
    const tokens = new TokenMap(db, now);
    const client = polygonRpcUrl ? createPolygonClient(polygonRpcUrl, { timeoutMs: config.venueTimeoutMs }) : undefined;
    const redeemer =
      client && builder
        ? new Redeemer({
            db,
            tokens,
            now,
            chain: createRedemptionChain(client),
            relayer: new RelayerHttp({ baseUrl: relayerUrl, builder, factory: REDEMPTION_CONTRACTS.walletFactory, timeoutMs: config.venueTimeoutMs, now }),
          })
        : undefined;
    return new PolymarketVenue({
      db,
      now,
      http: new ClobHttp({ baseUrl: clobUrl, timeoutMs: config.venueTimeoutMs, now }),
      tokens,
      positions: client ? createPositionReader(client) : undefined,
      redeemer,
    });
  }
  return paperVenue(config, db, now);
}

/** The paper venue of PAPER_*: books computed from each token's reference price (its band's seed price). */
function paperVenue(config: Config, db: Db, now: (() => number) | undefined, live?: Venue): PaperVenue {
  return new PaperVenue({
    db,
    now,
    startingBalanceMicros: config.paper.startingBalanceMicros,
    seed: config.paper.seed,
    drift: config.paper.drift,
    // The orders of one buy, sent together, read their prices in one statement (coalesce.ts).
    referencePrices: coalesced(async (tokenIds) => {
      if (!tokenIds.length) return new Map();
      const thresholds = tokenIds.map(parseLadderTokenId).filter((t) => t?.outcome === 'yes').map((t) => t!.bandId);
      // Prepared: every paper order reads its token's price (a fresh book per order). A band's token is
      // centred on the band's seed price; a ladder threshold's Yes on the sum over the bands above it.
      const statement = preparedSql<{ id: string; seed_price: number }>(db, 'paper_reference_prices', sql`
        select id, seed_price from event_bands where id = any(${sql.placeholder('ids')}::text[])
        union all
        select t.id || ':yes', sum(b.seed_price) from event_bands t
          join event_bands b on b.event_id = t.event_id and b.band_index >= t.band_index
          where t.id = any(${sql.placeholder('thresholds')}::text[]) group by t.id`);
      const rows = await statement.execute({ ids: tokenIds, thresholds });
      return new Map(rows.map((r) => [r.id, Number(r.seed_price)]));
    }),
    ...(live ? { books: (tokenIds: string[]) => live.getOrderBooks(tokenIds), rules: live.rules } : {}),
  });
}

/**
 * The venue test keys trade on beside a live venue (server/accounts/modes.ts; on a paper server they
 * use the server's own): a paper ledger whose orders fill against the live venue's books, so a test
 * trade sees the prices and depth a live one would, and moves nothing.
 */
export function createTestVenue(config: Config, db: Db, live: Venue, now?: () => number): Venue {
  return paperVenue(config, db, now, live);
}
