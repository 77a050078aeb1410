/**
 * Digests of the API keys this process admitted recently. The failed-authentication gate (429 per
 * client address, procedures.ts) is skipped for them: a client sending bad keys from a shared address
 * (users behind one NAT, or every client behind a proxy when TRUST_PROXY is off) must not lock out
 * the valid keys used from that address, and a known key's request skips the gate's client-address
 * lookup and limiter call. Being in here needs the key itself (its digest is the entry), so a key
 * guesser gains nothing; revocation is still checked by every admission, which drops the entry.
 */
export class RecentKeys {
  private seen = new Map<string, number>();

  constructor(
    private ttlMs = 10 * 60_000,
    private max = 10_000,
    private now: () => number = () => performance.now(),
  ) {}

  has(digest: string): boolean {
    const at = this.seen.get(digest);
    if (at === undefined) return false;
    if (this.now() - at <= this.ttlMs) return true;
    this.seen.delete(digest);
    return false;
  }

  /** Remembers an admitted key; past `max` keys the one admitted longest ago is forgotten. */
  add(digest: string) {
    if (this.seen.has(digest)) {
      // Refreshed at most once a second per key: no Map churn per request on a hot key.
      const at = this.seen.get(digest)!;
      if (this.now() - at < 1_000) return;
      this.seen.delete(digest);
    } else if (this.seen.size >= this.max) {
      this.seen.delete(this.seen.keys().next().value!);
    }
    this.seen.set(digest, this.now());
  }

  delete(digest: string) {
    this.seen.delete(digest);
  }
}
