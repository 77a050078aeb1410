/** Calls that must not compile: the test expects a type error on each marked line, and no other. */
import { createClient } from '@pre-ipo/client';

const api = createClient({ baseUrl: 'http://localhost:3000' });

export async function wrong() {
  await api.privateCompanies.list.query({ limit: 'lots' }); // error: limit
  await api.trading.buy.mutate({ eventId: 'evt', side: 'UP', amount: 10 }); // error: side
  await api.pricing.get.query({ verbose: true }); // error: unknown member
  const balance: string = (await api.billing.get.query()).balanceUsd; // error: output type
  await api.noSuchRouter.list.query(); // error: no such router
  return balance;
}
