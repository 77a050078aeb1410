/**
 * Token buckets in Redis, shared by every instance. One Lua script refills, takes and writes
 * atomically, on Redis's own clock so instances with skewed clocks agree.
 */
import { RedisClient } from 'bun';
import type { RateRule } from '../config.ts';
import { decide, type RateDecision, type RateLimiter } from './rate-limiter.ts';

/** Returns the tokens in the bucket before this request (after refill); `decide` does the rest. */
const SCRIPT = `
local rps = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local before = burst
if state[1] then
  before = math.min(burst, tonumber(state[1]) + math.max(0, now - tonumber(state[2])) * rps)
end
local after = before
if before >= 1 then after = before - 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(after), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rps * 1000) + 1000)
return tostring(before)
`;

export class RedisRateLimiter implements RateLimiter {
  private client: RedisClient;
  private sha?: string;

  constructor(url: string, private prefix = 'pipo:rl:') {
    this.client = new RedisClient(url, { autoReconnect: true, connectionTimeout: 2000 });
  }

  async take(bucket: string, rule: RateRule): Promise<RateDecision> {
    const args = ['1', this.prefix + bucket, String(rule.rps), String(rule.burst)];
    let before: string;
    try {
      this.sha ??= (await this.client.send('SCRIPT', ['LOAD', SCRIPT])) as string;
      before = (await this.client.send('EVALSHA', [this.sha, ...args])) as string;
    } catch (error) {
      if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error;
      before = (await this.client.send('EVAL', [SCRIPT, ...args])) as string;
    }
    return decide(Number(before), rule).decision;
  }

  async close() {
    this.client.close();
  }
}
