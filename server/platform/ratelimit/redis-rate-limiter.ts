/**
 * Token buckets in Redis, shared by every instance. One Lua script refills, takes and writes
 * atomically, on Redis's own clock so instances with skewed clocks agree.
 *
 * Redis being slow or gone must not take the API with it. Every call has a deadline (REDIS_TIMEOUT_MS,
 * 50 ms by default); past it, or on any connection error, the call fails and the caller serves the
 * request unlimited (fail open, see procedures.ts). A client that failed (or stopped answering) is
 * closed and replaced by a new one on the first call after a backoff (100 ms, doubling to 2 s), so
 * while Redis is down only one call per backoff waits (the others fail at once), and limits are back
 * within ~2 s of Redis. (Bun's own reconnection is off: it queued every command while retrying,
 * which held requests for seconds, and once it gave up the client stayed closed for good.)
 */
import { RedisClient } from 'bun';
import type { RateRule } from '../../config.ts';
import { decide, type RateDecision, type RateLimiter, type StoreErrorReason } from './rate-limiter.ts';
import { errorMessage } from '../../lib/error-message.ts';

/**
 * Returns the tokens in the bucket before this request (after refill); `decide` does the rest.
 * ARGV[3] is the cost: 1 takes a token, 0 only looks (and writes nothing, so a look creates no key).
 */
const SCRIPT = `
local rps = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local before = burst
if state[1] then
  before = math.min(burst, tonumber(state[1]) + math.max(0, now - tonumber(state[2])) * rps)
end
if cost > 0 then
  local after = before
  if before >= cost then after = before - cost end
  redis.call('HSET', KEYS[1], 'tokens', tostring(after), 'at', tostring(now))
  redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rps * 1000) + 1000)
end
return tostring(before)
`;
const SCRIPT_SHA = new Bun.CryptoHasher('sha1').update(SCRIPT).digest('hex');

/** How long a new connection may take to be set up (a deadline miss meanwhile does not drop it). */
const CONNECTION_TIMEOUT_MS = 1_000;
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 2_000;

export interface RedisRateLimiterOptions {
  /** The deadline of one call in milliseconds (config.redisTimeoutMs). */
  timeoutMs?: number;
  /** Prefix of every bucket's key. */
  prefix?: string;
}

export class RedisRateLimiterUnavailable extends Error {
  override name = 'RedisRateLimiterUnavailable';
}

export class RedisRateLimiter implements RateLimiter {
  private client: RedisClient | undefined;
  /** The current client has connected (its handshake is done). */
  private connected = false;
  /** A call has waited out its deadline on the current client while it was still connecting. */
  private slowToConnect = false;
  private retryAt = 0;
  private backoffMs = RECONNECT_FIRST_MS;
  private closed = false;
  private readonly timeoutMs: number;
  private readonly prefix: string;
  /** Counted for the operator metrics (preipo_ratelimit_store_errors_total). */
  readonly storeErrors: Record<StoreErrorReason, number> = { timeout: 0, error: 0, unavailable: 0 };

  constructor(
    private readonly url: string,
    options: RedisRateLimiterOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 50;
    this.prefix = options.prefix ?? 'pipo:rl:';
  }

  take(bucket: string, rule: RateRule): Promise<RateDecision> {
    return this.run(bucket, rule, true);
  }

  peek(bucket: string, rule: RateRule): Promise<RateDecision> {
    return this.run(bucket, rule, false);
  }

  private async run(bucket: string, rule: RateRule, consume: boolean): Promise<RateDecision> {
    let client: RedisClient;
    try {
      client = this.currentClient();
    } catch (error) {
      this.storeErrors.unavailable++;
      throw error;
    }
    const args = ['1', this.prefix + bucket, String(rule.rps), String(rule.burst), consume ? '1' : '0'];
    const before = await this.withinDeadline(client, this.evaluate(client, args));
    if (this.client === client) this.backoffMs = RECONNECT_FIRST_MS;
    return decide(Number(before), rule, consume).decision;
  }

  private async evaluate(client: RedisClient, args: string[]): Promise<string> {
    try {
      return (await client.send('EVALSHA', [SCRIPT_SHA, ...args])) as string;
    } catch (error) {
      // Redis restarted or its script cache was flushed: EVAL runs the script and caches it again.
      if (!errorMessage(error).startsWith('NOSCRIPT')) throw error;
      return (await client.send('EVAL', [SCRIPT, ...args])) as string;
    }
  }

  /** The live client, a new one once the backoff after a failure has passed, or a fast failure. */
  private currentClient(): RedisClient {
    if (this.client) {
      if (this.slowToConnect && !this.connected) throw new RedisRateLimiterUnavailable('Redis connection still being set up');
      return this.client;
    }
    if (this.closed) throw new RedisRateLimiterUnavailable('rate limiter closed');
    const now = performance.now();
    if (now < this.retryAt) throw new RedisRateLimiterUnavailable(`Redis unavailable; next attempt in ${Math.ceil(this.retryAt - now)} ms`);
    const client = new RedisClient(this.url, { autoReconnect: false, connectionTimeout: Math.max(CONNECTION_TIMEOUT_MS, this.timeoutMs) });
    client.onconnect = () => {
      if (this.client === client) this.connected = true;
    };
    client.onclose = () => this.drop(client);
    this.client = client;
    this.connected = false;
    this.slowToConnect = false;
    return client;
  }

  /**
   * A call missed its deadline. On a connected client Redis is hung: the client is dropped. On a client
   * still connecting (a distant or TLS Redis may take longer than one call's deadline to greet us) the
   * connection is left to finish, bounded by its own timeout, and calls fail at once until it has.
   */
  private missedDeadline(client: RedisClient) {
    if (this.client !== client) return;
    if (this.connected) this.drop(client);
    else this.slowToConnect = true;
  }

  /** Closes a failed client; the first call after the backoff opens a new one. */
  private drop(client: RedisClient) {
    // A late failure of a client already replaced changes nothing.
    if (this.client !== client) return;
    this.client = undefined;
    this.retryAt = performance.now() + this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, RECONNECT_MAX_MS);
    client.close();
  }

  /**
   * The call's answer, or a rejection once the deadline has passed (the timer is cleared on every
   * outcome). When the timer fires, pending I/O gets one more turn of the event loop first, so a stall
   * of our own process is not blamed on Redis. An answer arriving after the rejection is ignored (the
   * promise is settled; a token it took is just not reported), and a failure of a client that has been
   * replaced meanwhile changes nothing (drop and missedDeadline check the client).
   */
  private withinDeadline<T>(client: RedisClient, pending: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (settled) return;
            settled = true;
            this.storeErrors.timeout++;
            this.missedDeadline(client);
            reject(new RedisRateLimiterUnavailable(`Redis did not answer within ${this.timeoutMs} ms`));
          }),
        this.timeoutMs,
      );
      pending.then(
        (value) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(value);
        },
        (error) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.storeErrors.error++;
          // A server error (e.g. OOM) leaves the connection usable; anything else is the connection's.
          if ((error as { code?: string }).code !== 'ERR_REDIS_SERVER_ERROR') this.drop(client);
          reject(error);
        },
      );
    });
  }

  async close() {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    client?.close();
  }
}
