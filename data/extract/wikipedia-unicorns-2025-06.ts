/**
 * wikipedia-unicorns-2025-06: Wikipedia "List of unicorn startup companies" (current and former tables) as of
 * 2025-06-19, from github:ExPnWPYG/unicorn-analysis input/raw_data/. Nothing under input/datasets/ is read
 * (those are CB Insights / Crunchbase-derived copies and are rejected).
 *
 * This scrape dropped the "+" of the page's lower-bound valuations ("1+" became "1"), so a current-list
 * valuation of exactly 1 (billion) is not kept, nor the listed rows whose "+" the 2026 snapshots of the same
 * page still show with the same valuation date (Collibra 5+, Wildlife 3+, DriveNets 2.5+, …).
 *
 *   bun data/extract/wikipedia-unicorns-2025-06.ts
 */
import { extractWikipediaUnicorns } from './common.ts';

extractWikipediaUnicorns({
  id: 'wikipedia-unicorns-2025-06',
  mirror: { owner: 'ExPnWPYG', repo: 'unicorn-analysis', commit: '0f97cbe00893a6559594b135ff0cd6349281d063' },
  currentPath: 'input/raw_data/list-of-unicorn-startups_20250619 (wikipedia).csv',
  formerPath: 'input/raw_data/list-of-unicorn-former-startups_20250619 (wikipedia).csv',
  // The date in the upstream file names.
  retrieved: '2025-06-19',
  priority: 32,
  script: 'data/extract/wikipedia-unicorns-2025-06.ts',
  lowerBoundValues: [1],
  lowerBoundRows: [
    ['Collibra', 5],
    ['Wildlife', 3],
    ['DriveNets', 2.5],
    ['Eightfold.ai', 2.1],
    ['bKash', 2],
    ['Bought By Many', 2],
    ['FlixMobility', 2],
    ['Tipalti', 2],
    ['HeartFlow', 1.5],
    ['5ire', 1.5],
    ['OneCard', 1.4],
  ],
});
