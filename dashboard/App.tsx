import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { ErrorMessage } from './components/ErrorMessage.tsx';
import { shortHex } from './format.ts';
import { Funds } from './pages/Funds.tsx';
import { Keys } from './pages/Keys.tsx';
import { Markets } from './pages/Markets.tsx';
import { Overview } from './pages/Overview.tsx';
import { SignIn } from './pages/SignIn.tsx';
import { Trading } from './pages/Trading.tsx';
import { Usage } from './pages/Usage.tsx';
import { ROUTES, useRoute, type RoutePath } from './route.ts';
import { api, isUnauthorized, type Outputs } from './trpc.ts';

/** The session decides: sign-in, or the account's pages. */
export function App() {
  const session = useQuery({
    queryKey: ['auth.session'],
    // auth.status never answers 401: a signed-out visitor costs no failed request (and no console error);
    // only a live session is then read in full.
    queryFn: async () => ((await api.auth.status.query()).signedIn ? api.auth.session.query() : null),
  });

  if (session.isPending) {
    return (
      <main id="main" className="center" aria-busy="true">
        <p className="muted">Loading…</p>
      </main>
    );
  }
  if (session.isSuccess && session.data === null) return <SignIn />;
  if (session.isError) {
    if (isUnauthorized(session.error)) return <SignIn />;
    return (
      <main id="main" className="center">
        <ErrorMessage error={session.error} title="The dashboard could not reach the service" />
        <button type="button" className="button button-primary" onClick={() => void session.refetch()}>
          Try again
        </button>
      </main>
    );
  }
  return <SignedIn session={session.data!} />;
}

function SignedIn({ session }: { session: Outputs['auth']['session'] }) {
  const route = useRoute();
  const queryClient = useQueryClient();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  const [signingOut, setSigningOut] = useState(false);
  const logout = useMutation({
    // The pages are gone first (no more live refreshes) and their last requests answered, so no
    // request races the sign-out into a 401.
    mutationFn: async () => {
      await fetchesSettled(queryClient);
      return api.auth.logout.mutate();
    },
    // Nothing of the account stays in memory; a null session shows sign-in.
    onSuccess: () => {
      queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== 'auth.session' });
      queryClient.setQueryData(['auth.session'], null);
    },
    onError: () => setSigningOut(false),
  });
  const signOut = () => {
    setSigningOut(true);
    logout.mutate();
  };

  // A new page: move focus to it (not on the first render) so keyboard and screen-reader users land there.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.focus();
  }, [route]);

  return (
    <>
      <a className="skip-link" href="#main" onClick={(e) => {
          e.preventDefault();
          main.current?.focus();
        }}>
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar-inner">
          <span className="brand">Pre-IPO API</span>
          <nav aria-label="Dashboard">
            <ul className="nav">
              {ROUTES.map((r) => (
                <li key={r.path}>
                  <a href={`#${r.path}`} aria-current={route === r.path ? 'page' : undefined}>
                    {r.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div className="account">
            <span className="muted small" title={session.address}>
              <span className="visually-hidden">Signed in as </span>
              {shortHex(session.address, 4)}
            </span>
            <button type="button" className="button button-secondary" onClick={signOut} disabled={logout.isPending}>
              {logout.isPending ? 'Signing out…' : 'Sign out'}
            </button>
          </div>
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1} className="page">
        {logout.isError ? <ErrorMessage error={logout.error} title="Sign-out failed" /> : null}
        {signingOut ? <p className="muted">Signing out…</p> : <Page route={route} session={session} />}
      </main>
    </>
  );
}

function Page({ route, session }: { route: RoutePath; session: Outputs['auth']['session'] }) {
  switch (route) {
    case '/keys':
      return <Keys />;
    case '/funds':
      return <Funds />;
    case '/usage':
      return <Usage />;
    case '/trading':
      return <Trading />;
    case '/markets':
      return <Markets />;
    default:
      return <Overview session={session} />;
  }
}

/** Resolves once no query is fetching (or after 5 s: a hung request must not keep a customer signed in). */
function fetchesSettled(queryClient: QueryClient): Promise<void> {
  if (queryClient.isFetching() === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      unsubscribe();
      clearTimeout(timer);
      resolve();
    };
    const unsubscribe = queryClient.getQueryCache().subscribe(() => queryClient.isFetching() === 0 && done());
    const timer = setTimeout(done, 5_000);
  });
}
