/** Issue #19: being built. */
import { router } from '../server/trpc/init.ts';

export const marketHistoryRouter = router({});
