/**
 * wikipedia-unicorns-2026-05: Wikipedia "List of unicorn startup companies" (current and former tables),
 * scraped on 2026-05-13 into github:viktorpantushev/gender-aspekte-bei-unicorns (raw_data/*.csv; tables 0
 * and 1 of the page, per scrape_and_clean.ipynb). Footnote markers such as "[20]" are stripped.
 *
 *   bun data/extract/wikipedia-unicorns-2026-05.ts
 */
import { extractWikipediaUnicorns } from './common.ts';

extractWikipediaUnicorns({
  id: 'wikipedia-unicorns-2026-05',
  mirror: { owner: 'viktorpantushev', repo: 'gender-aspekte-bei-unicorns', commit: '3318309dda8ced2ff10563746142616e8b43a3d5' },
  currentPath: 'raw_data/current_unicorns.csv',
  formerPath: 'raw_data/past_unicorns.csv',
  // raw_data/ was committed on 2026-05-13 (9cafa89) by the scraping notebook.
  retrieved: '2026-05-13',
  priority: 31,
  script: 'data/extract/wikipedia-unicorns-2026-05.ts',
});
