import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { ErrorMessage } from './components/ErrorMessage.tsx';
import { shortHex } from './format.ts';
import { Funds } from './pages/Funds.tsx';
import { Keys } from './pages/Keys.tsx';
import { Overview } from './pages/Overview.tsx';
import { SignIn } from './pages/SignIn.tsx';
import { ROUTES, useRoute } from './route.ts';
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
  const logout = useMutation({
    mutationFn: () => api.auth.logout.mutate(),
    // Nothing of the account stays in memory; the session query answers 401 → sign-in.
    onSuccess: () => queryClient.resetQueries(),
  });

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
            <button type="button" className="button button-secondary" onClick={() => logout.mutate()} disabled={logout.isPending}>
              {logout.isPending ? 'Signing out…' : 'Sign out'}
            </button>
          </div>
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1} className="page">
        {logout.isError ? <ErrorMessage error={logout.error} title="Sign-out failed" /> : null}
        {route === '/keys' ? <Keys /> : route === '/funds' ? <Funds /> : <Overview session={session} />}
      </main>
    </>
  );
}
