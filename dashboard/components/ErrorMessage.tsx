import { problemOf } from '../trpc.ts';

/** An API (or wallet) failure in words, with the request id to quote to support. Announced to screen readers. */
export function ErrorMessage({ error, title = 'Something went wrong' }: { error: unknown; title?: string }) {
  if (!error) return null;
  const problem = problemOf(error);
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
