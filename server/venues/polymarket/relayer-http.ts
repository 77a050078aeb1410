/**
 * HTTP to Polymarket's relayer (POLYMARKET_RELAYER_URL), which submits deposit-wallet batches on
 * chain and pays their gas: `POST /submit` a signed WALLET batch, `GET /v1/account/transactions/<id>`
 * its state (STATE_NEW → STATE_EXECUTED → STATE_MINED → STATE_CONFIRMED, or STATE_FAILED /
 * STATE_INVALID). Requests carry the service's Builder API credentials (HMAC headers, the same
 * algorithm as the CLOB's L2 signature); the relayer answers nothing without them.
 */
import { ApiError } from '../../errors.ts';
import { l2Signature } from './l2-auth.ts';
import type { WalletBatch } from './wallet-batch.ts';
import { errorMessage } from '../../lib/error-message.ts';

export interface BuilderCredentials {
  apiKey: string;
  secret: string;
  passphrase: string;
}

export interface RelayerOptions {
  baseUrl: string;
  builder: BuilderCredentials;
  /** The DepositWalletFactory: the relayer's `to` for WALLET batches. */
  factory: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  now?: () => number;
}

export type RelayerState = 'STATE_NEW' | 'STATE_EXECUTED' | 'STATE_MINED' | 'STATE_CONFIRMED' | 'STATE_FAILED' | 'STATE_INVALID';

export interface RelayerTransaction {
  id: string;
  state: RelayerState | string;
  transactionHash: string | null;
  error: string | null;
}

export const isRelayerFailure = (state: string) => state === 'STATE_FAILED' || state === 'STATE_INVALID';

/** A relayer answer that is not 2xx: its status and message. */
export class RelayerError extends Error {
  override name = 'RelayerError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(`relayer answered ${status}: ${message}`);
  }
}

export class RelayerHttp {
  private fetch: typeof fetch;
  private now: () => number;

  constructor(private options: RelayerOptions) {
    this.fetch = options.fetch ?? fetch;
    this.now = options.now ?? Date.now;
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<any> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const timestamp = Math.floor(this.now() / 1000);
    const { apiKey, secret, passphrase } = this.options.builder;
    const headers: Record<string, string> = {
      accept: 'application/json',
      POLY_BUILDER_API_KEY: apiKey,
      POLY_BUILDER_PASSPHRASE: passphrase,
      POLY_BUILDER_TIMESTAMP: String(timestamp),
      POLY_BUILDER_SIGNATURE: l2Signature(secret, timestamp, method, path, text),
    };
    if (text !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await this.fetch(`${this.options.baseUrl.replace(/\/$/, '')}${path}`, { method, headers, body: text, signal: AbortSignal.timeout(this.options.timeoutMs) });
    } catch (error) {
      throw new ApiError('VENUE_UNAVAILABLE', `The relayer did not answer ${method} ${path}: ${errorMessage(error)}`, { cause: error });
    }
    const raw = await response.text();
    let parsed: any = raw;
    try {
      parsed = raw ? JSON.parse(raw) : null;
    } catch {}
    if (!response.ok) throw new RelayerError(response.status, String(parsed?.error ?? parsed?.message ?? raw).slice(0, 300));
    return parsed;
  }

  /** Submits a signed batch; answers the relayer's transaction id. */
  async submit(signer: string, batch: WalletBatch, signature: string, metadata: string): Promise<string> {
    const answer = await this.call('POST', '/submit', {
      type: 'WALLET',
      from: signer,
      to: this.options.factory,
      nonce: batch.nonce.toString(),
      signature,
      metadata: metadata.slice(0, 500),
      depositWalletParams: {
        depositWallet: batch.wallet,
        deadline: batch.deadline.toString(),
        calls: batch.calls.map((c) => ({ target: c.target, value: c.value.toString(), data: c.data })),
      },
    });
    const id = answer?.transactionID ?? answer?.transactionId ?? answer?.transaction_id;
    if (typeof id !== 'string' || !id) throw new RelayerError(502, `no transaction id in ${JSON.stringify(answer).slice(0, 200)}`);
    return id;
  }

  async transaction(id: string): Promise<RelayerTransaction> {
    const answer = await this.call('GET', `/v1/account/transactions/${encodeURIComponent(id)}`);
    const t = Array.isArray(answer) ? answer[0] : answer;
    if (!t || typeof t !== 'object') throw new RelayerError(404, `no transaction ${id}`);
    return {
      id,
      state: String(t.state ?? ''),
      transactionHash: t.transaction_hash ?? t.transactionHash ?? null,
      error: t.error_msg ?? t.errorMsg ?? null,
    };
  }
}
