/**
 * The balance credit, written once for every way money arrives (an operator's credit in accounts.ts,
 * a stablecoin deposit in deposits/store.ts). It is a pair of CTEs for the caller's one statement,
 * because each caller adds its own guard in the same statement: the deposit row's status change
 * before it, the events announcing it after.
 */
import { sql, type SQL } from 'drizzle-orm';

/**
 * `added`: the ledger rows `ledgerRows` selects, as (id, account_id, amount_micros, reference), each
 * inserted once per (account, reference) — a repeated or concurrent reference inserts nothing, the
 * unique key decides. `updated`: the balance of each account a row was inserted for, moved by its
 * amount, so the balance moves exactly when the ledger row is new; it returns (id, balance_micros,
 * amount_micros), the balance after. Later CTEs and the final select read both.
 */
export function balanceCreditCtes(ledgerRows: SQL): SQL {
  return sql`added as (
        insert into credits (id, account_id, amount_micros, reference)
        ${ledgerRows}
        on conflict (account_id, reference) do nothing
        returning account_id, amount_micros
      ), updated as (
        update accounts a
           set balance_micros = a.balance_micros + added.amount_micros
          from added
         where a.id = added.account_id
        returning a.id, a.balance_micros, added.amount_micros
      )`;
}
