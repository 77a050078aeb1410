/**
 * wikipedia-unicorns-2026-07: Wikipedia "List of unicorn startup companies" (current and former tables),
 * as scraped in July 2026 and committed to github:nathanaelguitar/team17-vc-scout-model (data/raw/, commit
 * of 2026-07-16). Only the two wikipedia_*.csv files are read; the CB Insights and Crunchbase files beside
 * them are not.
 *
 *   bun data/extract/wikipedia-unicorns-2026-07.ts
 */
import { extractWikipediaUnicorns } from './common.ts';

extractWikipediaUnicorns({
  id: 'wikipedia-unicorns-2026-07',
  mirror: { owner: 'nathanaelguitar', repo: 'team17-vc-scout-model', commit: 'c0f6e48821b33d0b5d05df0008075f43164d0301' },
  currentPath: 'data/raw/wikipedia_current_unicorns.csv',
  formerPath: 'data/raw/wikipedia_former_unicorns.csv',
  // The upstream commit that added the scrape (bb3a7c0, 2026-07-16); the page text is "as of July 2026".
  retrieved: '2026-07-16',
  priority: 30,
  script: 'data/extract/wikipedia-unicorns-2026-07.ts',
});
