import { afterAll } from 'bun:test';
import { dropTemplates, prepareTemplateInWorker } from './databases.ts';

process.env.NODE_ENV ??= 'test';
// Every test database is seeded with the dataset's fixed sample (seeds/company-dataset.ts); the whole
// dataset is seeded by tests/companies/full-dataset.test.ts alone.
process.env.SEED_COMPANIES ??= 'sample';
afterAll(dropTemplates);
await prepareTemplateInWorker();
