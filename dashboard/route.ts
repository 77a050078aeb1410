/** Hash routing: #/, #/keys, #/funds, #/usage, #/trading, #/markets. Works from any path the page is served at, no server help. */
import { useEffect, useState } from 'react';

export const ROUTES = [
  { path: '/', label: 'Overview' },
  { path: '/keys', label: 'API keys' },
  { path: '/funds', label: 'Funds' },
  { path: '/usage', label: 'Usage' },
  { path: '/trading', label: 'Trading' },
  { path: '/markets', label: 'Markets' },
] as const;

export type RoutePath = (typeof ROUTES)[number]['path'];

function current(): RoutePath {
  const path = window.location.hash.replace(/^#/, '') || '/';
  return ROUTES.find((r) => r.path === path)?.path ?? '/';
}

export function useRoute(): RoutePath {
  const [route, setRoute] = useState<RoutePath>(current);
  useEffect(() => {
    const onChange = () => setRoute(current());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
