/** The customer dashboard: a single page on /dashboard, talking to the service only through tRPC. */
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { isUnauthorized } from './trpc.ts';
import './styles.css';

// A session that ends while a page is open (expiry, sign-out in another tab): any 401 re-checks the
// session, whose 401 then shows sign-in.
const onError = (error: unknown, key?: readonly unknown[]) => {
  if (isUnauthorized(error) && key?.[0] !== 'auth.session') void queryClient.invalidateQueries({ queryKey: ['auth.session'] });
};

const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({ onError: (error, query) => onError(error, query.queryKey) }),
  mutationCache: new MutationCache({ onError: (error) => onError(error) }),
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      // A 401 is an answer (show sign-in), and a 4xx will not change on retry; network and 5xx get two more tries.
      retry: (failures, error) => !isUnauthorized(error) && !isClientError(error) && failures < 2,
      refetchOnWindowFocus: true,
    },
    mutations: { retry: false },
  },
});

function isClientError(error: unknown): boolean {
  const status = (error as { data?: { httpStatus?: number } } | null)?.data?.httpStatus;
  return typeof status === 'number' && status >= 400 && status < 500 && status !== 429;
}

const root = document.getElementById('root');
if (!root) throw new Error('#root is missing from the page');
createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
