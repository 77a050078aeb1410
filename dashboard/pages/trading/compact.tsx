/**
 * Long pages on a phone: lists show their first few rows (the rest on request), and secondary
 * sections fold behind a button, so a page of cards stays short. On a wider screen everything shows.
 */
import { useEffect, useId, useState, type ReactNode } from 'react';

/** On a phone (one card per row) a list shows its first few rows; the rest on request. */
const PHONE_ROWS = 3;
const PHONE = '(max-width: 48rem)';

/** Whether the page is as narrow as a phone (tables are cards), following the window as it changes. */
export function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => window.matchMedia(PHONE).matches);
  useEffect(() => {
    const query = window.matchMedia(PHONE);
    const changed = () => setNarrow(query.matches);
    query.addEventListener('change', changed);
    return () => query.removeEventListener('change', changed);
  }, []);
  return narrow;
}

/** The rows a list shows (on a phone the first `phoneRows`), and the button that shows all of them or fewer. */
export function useCompact<T>(rows: T[], what: string, phoneRows = PHONE_ROWS) {
  const narrow = useNarrow();
  const [all, setAll] = useState(false);
  const cut = narrow && !all && rows.length > phoneRows;
  const more =
    narrow && rows.length > phoneRows ? (
      <button type="button" className="button button-secondary" aria-expanded={all} onClick={() => setAll(!all)}>
        {all ? `Show fewer ${what}` : `Show all ${rows.length} ${what}`}
      </button>
    ) : null;
  return { shown: cut ? rows.slice(0, phoneRows) : rows, more };
}

/**
 * On a phone, `children` fold behind a button ("Show the latest orders") and are drawn only once
 * opened; on a wider screen they simply show. The button says whether they are open (aria-expanded).
 */
export function PhoneFolded({ what, detail, children }: { what: string; /** Read after `what` by screen readers only (the button's full name). */ detail?: string; children: ReactNode }) {
  const narrow = useNarrow();
  const [open, setOpen] = useState(false);
  const id = useId();
  if (!narrow) return <>{children}</>;
  return (
    <>
      <button type="button" className="button button-secondary fold-toggle" aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)}>
        {open ? `Hide ${what}` : `Show ${what}`}
        {detail ? <span className="visually-hidden"> {detail}</span> : null}
      </button>
      <div id={id} hidden={!open}>
        {open ? children : null}
      </div>
    </>
  );
}
