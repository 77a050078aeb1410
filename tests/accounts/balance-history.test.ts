/**
 * GET /api/accounts/balance-history: every credit of the calling account — operator credits and
 * stablecoin deposits, told apart by the deposit they credit, not by their text — newest first, keyset
 * paged (each entry exactly once, ties and microseconds included), with totals that agree with GET
 * /api/billing (balance = credited − spent). Another account's credits never show; a signed-in session
 * sees its own account and pays like a key; bad input is a 400 naming the parameter before any charge.
 * Nothing here depends on the credits (account_id, created_at, id) index existing: it only makes the
 * walk cheap.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { creditAccount } from '../../server/accounts/accounts.ts';
import { and, count, eq, isNull, sql } from 'drizzle-orm';
import { accountWallets, deposits, usageRecords } from '../../db/schema.ts';
import { creditDeposit, recordDeposit } from '../../server/deposits/store.ts';
import { createTestApp, DASHBOARD_KEY, json, trpcClient, type TestApp } from '../harness/app.ts';
import { dashboardHeaders, fundedAccount, newUserId, type FundedAccount } from '../harness/factories.ts';
import { signIn, type SignedIn } from '../harness/sign-in.ts';

const ROUTE = '/api/accounts/balance-history';
const micros = (usd: number | string | null) => Math.round(Number(usd) * 1_000_000);
const DEPOSIT_ADDRESS = '0x000000000000000000000000000000000000d3b0';
const USDC = '0x3c499c542cef5e3811e1192ce70d8cc03d5c3359';

let t: TestApp;
let acct: FundedAccount;
let other: FundedAccount;
let depositId: string;
let depositReference: string;
/** The references of acct's credits in the order they were made (oldest first). */
const made: string[] = [];

const get = (query: string, headers: Record<string, string>) => t.request(`${ROUTE}${query}`, { headers });
const history = async (query: string, headers: Record<string, string> = acct.headers) => {
  const res = await get(query, headers);
  const body = await json(res);
  expect(`${res.status} ${JSON.stringify(body)}`).toStartWith('200 ');
  return { res, body };
};

/** Every entry, walking the pages with `limit`: the entries and how many pages it took. */
async function walk(limit: number, headers: Record<string, string> = acct.headers) {
  const entries: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const { body }: { body: any } = await history(`?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, headers);
    expect(body.entries.length).toBeLessThanOrEqual(limit);
    if (body.nextCursor !== null) expect(body.entries).toHaveLength(limit);
    entries.push(...body.entries);
    cursor = body.nextCursor;
    pages++;
    expect(pages).toBeLessThan(100);
  } while (cursor !== null);
  return { entries, pages };
}

async function operatorCredit(accountId: string, amountUsd: number, reference: string) {
  const res = await t.request('/api/accounts/credits', {
    method: 'POST',
    headers: { ...dashboardHeaders(DASHBOARD_KEY, accountId), 'content-type': 'application/json' },
    body: JSON.stringify({ amountUsd, reference }),
  });
  expect(res.status).toBe(200);
  expect((await json(res)).credited).toBe(true);
}

/** A stablecoin deposit from a wallet of the account, recorded and credited by the real statements (as the watcher does once final). */
async function depositCredit(accountId: string, amountMicros: number, txByte: string) {
  const db = t.database.db;
  const from = newUserId().toLowerCase();
  await db.insert(accountWallets).values({ address: from, accountId }).onConflictDoNothing();
  const key = { chainId: 137, txHash: `0x${txByte.repeat(64)}`, logIndex: 3 };
  const block = { number: 1_000n, hash: `0x${'b'.repeat(64)}` };
  await recordDeposit(db, key, block, { logIndex: key.logIndex, token: USDC, from, to: DEPOSIT_ADDRESS, amountMicros });
  const credited = await creditDeposit(db, key, block.hash);
  expect(credited).toEqual({ accountId, amountMicros });
  const [row] = await db.select({ id: deposits.id }).from(deposits).where(eq(deposits.txHash, key.txHash));
  return { id: row!.id, reference: `deposit:137:${key.txHash}:3` };
}

/** Spaced so each credit has a created_at of its own even on a clock that ticks by the millisecond. */
const tick = () => Bun.sleep(3);

beforeAll(async () => {
  t = await createTestApp();
  acct = await fundedAccount(t, { usd: 10 }); // its first credit: seed-…, by the factory (an operator credit)
  made.push('seed');
  other = await fundedAccount(t, { usd: 7 });
  await operatorCredit(other.accountId, 3, 'other-wire-1');
  for (let i = 1; i <= 4; i++) {
    await tick();
    await operatorCredit(acct.accountId, i, `wire-${i}`);
    made.push(`wire-${i}`);
  }
  await tick();
  // An operator credit whose reference merely looks like a deposit's (written before the credit route
  // refused such references, as a database may hold): no such deposit, so an operator credit.
  await creditAccount(t.database.db, { accountId: acct.accountId, amountMicros: 500_000, reference: `deposit:137:0x${'e'.repeat(64)}:0` });
  made.push(`deposit:137:0x${'e'.repeat(64)}:0`);
  await tick();
  ({ id: depositId, reference: depositReference } = await depositCredit(acct.accountId, 25_500_000, 'a'));
  made.push(depositReference);
  // Some usage, so spent is not zero.
  for (let i = 0; i < 3; i++) expect((await t.request('/api/billing', { headers: acct.headers })).status).toBe(200);
});
afterAll(() => t.close());

describe('the entries', () => {
  test('every credit of the account, newest first, with its kind; the deposit names its deposit', async () => {
    const { res, body } = await history('');
    expect(res.headers.get('x-request-cost-usd')).toBe('0.002');
    expect(body.limit).toBe(50);
    expect(body.nextCursor).toBeNull();
    expect(body.entries.map((e: any) => e.reference.replace(/^seed-\d+$/, 'seed'))).toEqual([...made].reverse());
    expect(Object.keys(body.entries[0]).sort()).toEqual(['amountUsd', 'createdAt', 'depositId', 'id', 'kind', 'reference']);
    expect(body.entries[0]).toMatchObject({ kind: 'deposit', amountUsd: 25.5, reference: depositReference, depositId });
    expect(body.entries[0].id).toStartWith('crd_');
    for (const entry of body.entries.slice(1)) expect(entry).toMatchObject({ kind: 'operator_credit', depositId: null });
    expect(body.entries.find((e: any) => e.reference === 'wire-3').amountUsd).toBe(3);
    const times = body.entries.map((e: any) => Date.parse(e.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  test('the deposit is the one GET /api/accounts/deposits lists as credited', async () => {
    const res = await t.request('/api/accounts/deposits', { headers: dashboardHeaders(DASHBOARD_KEY, acct.accountId) });
    const listed = (await json(res)).deposits;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: depositId, status: 'credited', amount: 25.5 });
  });

  test('another account\'s credits never appear', async () => {
    const mine = (await walk(50)).entries;
    expect(mine.some((e: any) => e.reference === 'other-wire-1')).toBe(false);
    const theirs = (await walk(50, other.headers)).entries;
    expect(theirs.map((e: any) => e.reference.replace(/^seed-\d+$/, 'seed'))).toEqual(['other-wire-1', 'seed']);
    const mineIds = new Set(mine.map((e: any) => e.id));
    expect(theirs.some((e: any) => mineIds.has(e.id))).toBe(false);
  });
});

describe('paging', () => {
  test('every limit walks every entry exactly once, in the one stable order', async () => {
    const whole = (await walk(200)).entries.map((e: any) => e.id);
    expect(whole).toHaveLength(made.length);
    for (const limit of [1, 2, 4, made.length - 1, made.length]) {
      const { entries, pages } = await walk(limit);
      expect(entries.map((e: any) => e.id)).toEqual(whole);
      expect(pages).toBe(Math.max(1, Math.ceil(made.length / limit)));
    }
  });

  test('credits of the same instant, and of instants a microsecond apart, are each walked once', async () => {
    const tied = await fundedAccount(t, { usd: 0 });
    const db = t.database.db;
    const at = ['2026-11-22T06:00:00.000001Z', '2026-11-22T06:00:00.000002Z', '2026-11-22T06:00:00.000002Z', '2026-11-22T06:00:00.000002Z', '2026-11-22T06:00:00.000003Z', '2026-11-22T06:00:00.000003Z', '2026-11-22T06:00:00.001Z'];
    for (const [i, instant] of at.entries()) {
      // A ledger row and its balance together, as every credit is made (the invariant holds for this account too).
      await db.execute(sql`
        with added as (insert into credits (id, account_id, amount_micros, reference, created_at)
                       values (${`crd_tied${i}`}, ${tied.accountId}, 1000000, ${`tied-${i}`}, ${instant}::timestamptz) returning amount_micros)
        update accounts set balance_micros = balance_micros + (select amount_micros from added) where id = ${tied.accountId}`);
    }
    const expected = at.map((instant, i) => ({ instant, id: `crd_tied${i}` })).sort((a, b) => (a.instant === b.instant ? 0 : a.instant < b.instant ? 1 : -1));
    const whole = (await walk(200, tied.headers)).entries.map((e: any) => e.id);
    expect(whole).toHaveLength(at.length);
    expect(new Set(whole).size).toBe(at.length);
    // Newest instant first; within an instant, one fixed order.
    const instantOf = new Map(at.map((instant, i) => [`crd_tied${i}`, instant]));
    expect(whole.map((id: string) => instantOf.get(id))).toEqual(expected.map((e) => e.instant));
    for (const limit of [1, 2, 3]) expect((await walk(limit, tied.headers)).entries.map((e: any) => e.id)).toEqual(whole);
  });
});

describe('the totals', () => {
  test('agree with GET /api/billing: credited all time, spent all time, balance = credited − spent', async () => {
    const { res, body } = await history('?limit=1');
    const cost = micros(res.headers.get('x-request-cost-usd'));
    const { totals } = body;
    const everyCredit = (await walk(200)).entries.reduce((sum: number, e: any) => sum + micros(e.amountUsd), 0);
    expect(micros(totals.creditedUsd)).toBe(everyCredit);
    expect(micros(totals.creditedUsd)).toBe(10_000_000 + 1_000_000 + 2_000_000 + 3_000_000 + 4_000_000 + 500_000 + 25_500_000);
    expect(micros(totals.balanceUsd)).toBe(micros(totals.creditedUsd) - micros(totals.spentUsd));
    // GET /api/billing right after: this history call and the walk above are spent, and the billing call itself.
    const billingRes = await t.request('/api/billing', { headers: acct.headers });
    const billing = await json(billingRes);
    const since = micros(billing.usageCostUsd) - micros(totals.spentUsd);
    expect(since % cost).toBe(0);
    expect(micros(billing.balanceUsd)).toBe(micros(totals.balanceUsd) - since);
    expect(micros(billing.balanceUsd)).toBe(micros(totals.creditedUsd) - micros(billing.usageCostUsd));
    expect(billing.depositedUsd).toBe(25.5);
  });

  test('the totals count this request, like GET /api/billing does', async () => {
    const first = (await history('?limit=1')).body.totals;
    const second = (await history('?limit=1')).body.totals;
    expect(micros(second.spentUsd) - micros(first.spentUsd)).toBe(2_000);
    expect(micros(first.balanceUsd) - micros(second.balanceUsd)).toBe(2_000);
    expect(second.creditedUsd).toBe(first.creditedUsd);
  });
});

describe('a signed-in customer', () => {
  let session: SignedIn;
  beforeAll(async () => {
    session = await signIn(t);
    await operatorCredit(session.accountId, 4, 'session-wire');
  });

  test('sees its own account\'s history, whatever x-account-id says, and is billed like a key (usage row without a key)', async () => {
    const usageBefore = await t.database.db.select({ n: count() }).from(usageRecords).where(and(eq(usageRecords.accountId, session.accountId), isNull(usageRecords.apiKeyId)));
    const res = await get('', { cookie: session.cookie, 'x-account-id': acct.accountId });
    const body = await json(res);
    expect(`${res.status} ${JSON.stringify(body)}`).toStartWith('200 ');
    expect(res.headers.get('x-request-cost-usd')).toBe('0.002');
    expect(body.entries.map((e: any) => [e.reference, e.kind])).toEqual([['session-wire', 'operator_credit']]);
    expect(body.totals).toEqual({ creditedUsd: 4, spentUsd: 0.002, balanceUsd: 3.998 });
    const usageAfter = await t.database.db.select({ n: count() }).from(usageRecords).where(and(eq(usageRecords.accountId, session.accountId), isNull(usageRecords.apiKeyId)));
    expect(usageAfter[0]!.n).toBe(usageBefore[0]!.n + 1);
  });

  test('a deposit from its wallet shows as a deposit', async () => {
    const deposit = await depositCredit(session.accountId, 2_000_000, 'c');
    const { body } = await history('', { cookie: session.cookie });
    expect(body.entries[0]).toMatchObject({ kind: 'deposit', reference: deposit.reference, depositId: deposit.id, amountUsd: 2 });
    expect(body.entries).toHaveLength(2);
  });
});

describe('the typed client', () => {
  test('balanceHistory.list answers the same pages as REST', async () => {
    const client = trpcClient(t, acct.headers);
    const first = await client.balanceHistory.list.query({ limit: 2 });
    expect(first.entries).toHaveLength(2);
    expect(first.entries[0]).toMatchObject({ kind: 'deposit', depositId });
    const second = await client.balanceHistory.list.query({ limit: 2, cursor: first.nextCursor! });
    const rest = (await history('?limit=4')).body.entries.map((e: any) => e.id);
    expect([...first.entries, ...second.entries].map((e) => e.id)).toEqual(rest);
    const all = await client.balanceHistory.list.query();
    expect(all.limit).toBe(50);
    expect(all.entries).toHaveLength(made.length);
  });

  test('a bad input is the same 400 in the tRPC envelope', async () => {
    const refused = await trpcClient(t, acct.headers).balanceHistory.list.query({ limit: 0 }).catch((e) => e);
    expect(refused.data?.api).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect(refused.data.api.message).toStartWith('limit: ');
  });
});

describe('bad input: a 400 naming the parameter, before any charge', () => {
  const foreign = Buffer.from(JSON.stringify(['-date', '2026-03-31', 'x'])).toString('base64url');
  const badInstant = Buffer.from(JSON.stringify(['newest', '2026-02-31T00:00:00.000000Z', 'crd_x'])).toString('base64url');
  const notAnInstant = Buffer.from(JSON.stringify(['newest', "2026-11-22'; select 1 --", 'crd_x'])).toString('base64url');
  const yearZero = Buffer.from(JSON.stringify(['newest', '0000-01-01T00:00:00.000000Z', 'crd_x'])).toString('base64url');
  const CASES: Array<[query: string, parameter: string, rule: RegExp]> = [
    ['?limit=0', 'limit', /must be from 1 to 200/],
    ['?limit=201', 'limit', /must be from 1 to 200/],
    ['?limit=two', 'limit', /whole number/],
    ['?cursor=garbage', 'cursor', /is not a cursor this list gave/],
    [`?cursor=${foreign}`, 'cursor', /is not a cursor this list gave/],
    [`?cursor=${badInstant}`, 'cursor', /is not a cursor this list gave/],
    [`?cursor=${notAnInstant}`, 'cursor', /is not a cursor this list gave/],
    [`?cursor=${yearZero}`, 'cursor', /is not a cursor this list gave/],
    ['?colour=blue', 'colour', /Unknown parameter: colour/],
  ];
  let poor: FundedAccount;
  beforeAll(async () => {
    poor = await fundedAccount(t, { usd: 0 });
  });
  const usageRows = async (accountId: string) => (await t.database.db.select({ n: count() }).from(usageRecords).where(eq(usageRecords.accountId, accountId)))[0]!.n;

  for (const [query, parameter, rule] of CASES) {
    test(`${query}: 400 naming ${parameter}, for a funded account and for one with nothing (not 402), charged nothing`, async () => {
      for (const who of [acct, poor]) {
        const before = await usageRows(who.accountId);
        const res = await get(query, who.headers);
        const body = await json(res);
        expect(`${res.status} ${JSON.stringify(body)}`).toStartWith('400 ');
        expect(Object.keys(body)).toEqual(['code', 'message', 'status', 'requestId']);
        expect(body).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
        expect(body.message).toContain(parameter);
        expect(body.message).toMatch(rule);
        if (parameter !== 'colour') expect(body.message).toStartWith(`${parameter}: `);
        expect(res.headers.get('x-request-cost-usd') ?? '0').toBe('0');
        expect(await usageRows(who.accountId)).toBe(before);
      }
    });
  }

  test('the same call with good input is the 402 the empty account has earned', async () => {
    const res = await get('?limit=5', poor.headers);
    expect(res.status).toBe(402);
    expect((await json(res)).code).toBe('INSUFFICIENT_BALANCE');
  });

  test('an operator credit may not take a deposit\'s reference: 400 naming reference, nothing credited', async () => {
    const before = (await history('')).body.totals.creditedUsd;
    const res = await t.request('/api/accounts/credits', {
      method: 'POST',
      headers: { ...dashboardHeaders(DASHBOARD_KEY, acct.accountId), 'content-type': 'application/json' },
      body: JSON.stringify({ amountUsd: 1, reference: `deposit:137:0x${'f'.repeat(64)}:0` }),
    });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toStartWith('reference: must not start with deposit:');
    expect((await history('')).body.totals.creditedUsd).toBe(before);
  });

  test('a cursor the list gave is accepted', async () => {
    const { body } = await history('?limit=1');
    expect(body.nextCursor).not.toBeNull();
    expect((await get(`?limit=1&cursor=${body.nextCursor}`, acct.headers)).status).toBe(200);
  });
});
