/** `npm run seed`: migrates and loads the seed data into the configured database (idempotent). */
import { loadConfig } from '../server/config.ts';
import { closeServices, openServices } from '../server/start.ts';

const services = await openServices(loadConfig(), { seed: true });
await closeServices(services);
