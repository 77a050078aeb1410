/** The REST client (@pre-ipo/client/rest): typed paths, parameters, answers and error bodies. */
import { callInfoOf, createRestClient, type RestApiError } from '@pre-ipo/client/rest';
import { env, report } from './env.js';

const rest = createRestClient({ baseUrl: env.baseUrl, apiKey: env.apiKey });

const pricing = await rest.GET('/pricing');
const events = await rest.GET('/trading/events');
const open = events.data?.events.find((event) => event.status === 'open');
if (!open) throw new Error('no open event');
const quote = await rest.POST('/trading/quote', { params: { header: { 'x-user-id': env.userId } }, body: { eventId: open.id, side: 'SHORT', amount: 30 } });
const companies = await rest.GET('/private-companies', { params: { query: { limit: 1 } } });
// A refusal: the error body is typed.
const refused = await rest.GET('/private-companies', { params: { query: { limit: 0 } } });
const error: RestApiError | undefined = refused.error;

report({
  pricing: { unitPrice: pricing.data?.costPerRequestUsd, ...callInfoOf(pricing.response) },
  quote: { eventId: quote.data?.eventId, totalCost: quote.data?.totalCost, ...callInfoOf(quote.response) },
  companies: { count: companies.data?.companies.length, ...callInfoOf(companies.response) },
  refused: { status: refused.response.status, error, ...callInfoOf(refused.response) },
});
