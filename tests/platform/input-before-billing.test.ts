/**
 * Input errors before billing errors: a caller whose balance pays for nothing (the attacker with many
 * free accounts, or a customer who has not funded yet) still gets the 400 that names the bad
 * parameter, for the rules between parameters too (min above max, from after to, a cursor another
 * list gave, a resume id, an idempotency key), on both transports, and nothing is recorded or charged.
 * The same calls with good input are the 402 the account has earned, so the balance is what refuses
 * them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { count, eq } from 'drizzle-orm';
import { usageRecords } from '../../db/schema.ts';
import { createTestApp, json, trpcClient, type TestApp } from '../harness/app.ts';
import { fundedAccount, newUserId, type FundedAccount } from '../harness/factories.ts';

let t: TestApp;
let free: FundedAccount;
let user: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  free = await fundedAccount(t, { usd: 0 });
  user = { ...free.headers, 'x-user-id': newUserId() };
});
afterAll(() => t.close());

const usageRows = async () => (await t.database.db.select({ n: count() }).from(usageRecords).where(eq(usageRecords.accountId, free.accountId)))[0]!.n;

/** [what, request, the good form of the same request, the parameter the 400 names, the rule]. */
type Case = [what: string, bad: () => Promise<Response>, good: () => Promise<Response>, parameter: string, rule: RegExp];

const get = (path: string, as: 'key' | 'user' = 'key') => () => t.request(path, { headers: as === 'user' ? user : free.headers });
const buy = (headers: Record<string, string>, body: Record<string, unknown> = {}) => () =>
  t.request('/api/trading/buy', { method: 'POST', headers: { ...user, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ eventId: 'openai-ipo', side: 'LONG', amount: 5, ...body }) });

const CASES: Case[] = [
  ['company bounds', get('/api/private-companies?minValuation=9&maxValuation=1'), get('/api/private-companies?minValuation=1&maxValuation=9'), 'minValuation', /must not be greater than maxValuation/],
  ['export bounds', get('/api/private-companies/export?minFunding=9&maxFunding=1'), get('/api/private-companies/export?minFunding=1&maxFunding=9'), 'minFunding', /must not be greater than maxFunding/],
  ['round amounts', get('/api/funding-rounds?minAmount=9&maxAmount=1'), get('/api/funding-rounds?minAmount=1&maxAmount=9'), 'minAmount', /must not be greater than maxAmount/],
  ['round days', get('/api/funding-rounds?from=2025-02-01&to=2025-01-01'), get('/api/funding-rounds?from=2025-01-01&to=2025-02-01'), 'from', /must not be after to/],
  ['rounds cursor', get('/api/funding-rounds?cursor=bm90LWEtY3Vyc29y'), get('/api/funding-rounds'), 'cursor', /is not a cursor this list gave/],
  ['investors cursor of another sort', get(`/api/investors?sort=name&cursor=${Buffer.from('["-portfolioCount",3,1]').toString('base64url')}`), get('/api/investors?sort=name'), 'cursor', /is not a cursor this list gave/],
  ['portfolio cursor', get('/api/investors/1/portfolio?cursor=x'), get('/api/investors/1/portfolio'), 'cursor', /is not a cursor this list gave/],
  ['usage range', get('/api/usage?from=2026-11-02&to=2026-11-01'), get('/api/usage?from=2026-11-01&to=2026-11-02'), 'from', /must not be after to/],
  ['usage summary range', get('/api/usage/summary?from=2026-11-02&to=2026-11-01'), get('/api/usage/summary'), 'from', /must not be after to/],
  ['hourly summary without from', get('/api/usage/summary?bucket=hour'), get('/api/usage/summary?bucket=hour&from=2026-11-01&to=2026-11-02'), 'bucket', /hour needs from/],
  ['trade history range', get('/api/trading/history?startDate=2026-11-02&endDate=2026-11-01', 'user'), get('/api/trading/history', 'user'), 'startDate', /must not be after endDate/],
  ['portfolio range', get('/api/trading/portfolio/history?from=2026-11-02&to=2026-11-01', 'user'), get('/api/trading/portfolio/history', 'user'), 'from', /must not be after to/],
  ['account stream resume id', get('/api/trading/stream/account?lastEventId=not-an-id', 'user'), get('/api/trading/stream/account', 'user'), 'lastEventId', /not an id this stream sent/],
  ['Idempotency-Key', buy({ 'idempotency-key': 'two words' }), buy({ 'idempotency-key': 'one-key' }), 'Idempotency-Key', /1-255 visible ASCII/],
  ['idempotencyKey against the header', buy({ 'idempotency-key': 'one-key' }, { idempotencyKey: 'another-key' }), buy({}, { idempotencyKey: 'another-key' }), 'idempotencyKey', /differs from the Idempotency-Key header/],
];

describe('a caller who can pay for nothing', () => {
  for (const [what, bad, good, parameter, rule] of CASES) {
    test(`${what}: 400 naming ${parameter}, nothing recorded; good input is the 402`, async () => {
      const before = await usageRows();
      const refused = await bad();
      const body = await json(refused);
      expect(`${refused.status} ${JSON.stringify(body)}`).toStartWith('400 ');
      expect(body).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
      expect(body.message).toStartWith(`${parameter}: `);
      expect(body.message).toMatch(rule);
      const paid = await good();
      expect(`${paid.status} ${JSON.stringify(await json(paid))}`).toStartWith('402 ');
      expect(await usageRows()).toBe(before);
    });
  }

  test('over /trpc: the same 400 in the tRPC envelope, before the 402', async () => {
    const client = trpcClient(t, free.headers);
    const bad = await client.privateCompanies.list.query({ minEmployees: 10, maxEmployees: 1 }).catch((e) => e);
    expect(bad.data?.api).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect(bad.data.api.message).toStartWith('minEmployees: must not be greater than maxEmployees');
    const poor = await client.privateCompanies.list.query({ minEmployees: 1, maxEmployees: 10 }).catch((e) => e);
    expect(poor.data?.api).toMatchObject({ code: 'INSUFFICIENT_BALANCE', status: 402 });
    expect(await usageRows()).toBe(0);
  });
});

describe('a funded caller', () => {
  test('bounds in order are answered; equal bounds are in order', async () => {
    const paying = await fundedAccount(t, { usd: 5 });
    const response = await t.request('/api/private-companies?minFoundedYear=2015&maxFoundedYear=2015&limit=5', { headers: paying.headers });
    expect(response.status).toBe(200);
    const body = await json(response);
    for (const company of body.companies) expect(company.foundedYear).toBe(2015);
  });
});
