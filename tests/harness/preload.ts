import { afterAll } from 'bun:test';
import { dropTemplates } from './databases.ts';

process.env.NODE_ENV ??= 'test';
afterAll(dropTemplates);
