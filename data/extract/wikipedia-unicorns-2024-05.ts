/**
 * wikipedia-unicorns-2024-05: Wikipedia "List of unicorn startup companies" (the list table only) as of May
 * 2024, from github:simrantanwani226/Compete-Finder output.csv. The upstream app.py read the page's third
 * `wikitable` with pandas and wrote it out with the page's own columns renamed to "Company,
 * Valuation(US$ billions), Valuation date, Industry, Country, Founders"; the cells keep the page's footnote
 * markers ("December 2023 [20]"), its lower bounds ("1+") and ranges ("80-90"), which are not kept. Only
 * output.csv is read (the Founders column is not copied). The page's former-unicorn table is not in this copy.
 *
 * The file exists only in the repository's initial commit (434954a, 2024-05-24); that commit date is the
 * snapshot date (the newest valuation date in the table is February 2024).
 *
 *   bun data/extract/wikipedia-unicorns-2024-05.ts
 */
import { gitShow, parseCsv } from './common.ts';
import { extractWikipediaListRows } from './wikipedia-unicorns-2020-03.ts';

const PATH = 'output.csv';

extractWikipediaListRows({
  id: 'wikipedia-unicorns-2024-05',
  mirror: { owner: 'simrantanwani226', repo: 'Compete-Finder', commit: '434954ab1b80d6c0c5fd4820f0c44a24ba62cc3e' },
  paths: [PATH],
  // The commit that added output.csv (434954a, 2024-05-24).
  retrieved: '2024-05-24',
  priority: 33,
  script: 'data/extract/wikipedia-unicorns-2024-05.ts',
  tables: 'list table',
  read: (m) => {
    const [header, ...body] = parseCsv(gitShow(m, PATH));
    const want = ['Company', 'Valuation(US$ billions)', 'Valuation date', 'Industry', 'Country', 'Founders'];
    if (!header || header.join('|') !== want.join('|')) throw new Error(`${PATH}: unexpected header ${header?.join('|')}`);
    return body.map((r) => ({ name: r[0] ?? '', valuation: r[1] ?? '', valuationDate: r[2] ?? '', industry: r[3] ?? '', country: r[4] ?? '' }));
  },
});
