/** Long lists on a phone: the first few rows, the rest on request (a page of cards stays short). */
import { useEffect, useState } from 'react';

/** On a phone (one card per row) a list shows its first few rows; the rest on request. */
const PHONE_ROWS = 3;
const PHONE = '(max-width: 48rem)';

export function useCompact<T>(rows: T[], what: string) {
  const [narrow, setNarrow] = useState(() => window.matchMedia(PHONE).matches);
  const [all, setAll] = useState(false);
  useEffect(() => {
    const query = window.matchMedia(PHONE);
    const changed = () => setNarrow(query.matches);
    query.addEventListener('change', changed);
    return () => query.removeEventListener('change', changed);
  }, []);
  const cut = narrow && !all && rows.length > PHONE_ROWS;
  const more =
    narrow && rows.length > PHONE_ROWS ? (
      <button type="button" className="button-secondary" aria-expanded={all} onClick={() => setAll(!all)}>
        {all ? `Show fewer ${what}` : `Show all ${rows.length} ${what}`}
      </button>
    ) : null;
  return { shown: cut ? rows.slice(0, PHONE_ROWS) : rows, more };
}
