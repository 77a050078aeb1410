import { problemOf } from '../trpc.ts';

/** An API (or wallet) failure in words, with the request id to quote to support. Announced to screen readers. */
export function ErrorMessage({ error, title = 'Something went wrong' }: { error: unknown; title?: string }) {
  if (!error) return null;
  const problem = problemOf(error);
  // Reading billed data with the session costs what a key's call costs (docs/decisions.md §4): at
  // $0 that is a balance to add, not a fault.
  if (problem.code === 'INSUFFICIENT_BALANCE') {
    return (
      <div className="notice" role="status">
        <p className="notice-title">{title}</p>
        <p>{problem.message}. Reading it here is billed like an API call ($0.002 a request at the standard rate).</p>
        <p>
          <a href="#/funds">Add funds</a>
        </p>
      </div>
    );
  }
  return (
    <div className="notice notice-error" role="alert">
      <p className="notice-title">{title}</p>
      <p>{problem.message}</p>
      {problem.requestId || problem.status ? (
        <p className="muted small">
          {problem.status ? <>Error {problem.code} (HTTP {problem.status})</> : <>Error {problem.code}</>}
          {problem.requestId ? (
            <>
              {' · '}request id <code>{problem.requestId}</code>
            </>
          ) : null}
        </p>
      ) : null}
    </div>
  );
}
