/**
 * Where a webhook may point (SSRF): only at public internet addresses. A URL is checked
 * when it is registered and again before every delivery, after DNS: every address its host resolves
 * to (IPv4 and IPv6) must be public, and the delivery then connects to the very address checked
 * (worker.ts pins it), so a name that re-resolves to a private address between the check and the
 * connection (DNS rebinding) reaches nothing.
 *
 * Refused: loopback, private, shared (CGNAT), link-local (169.254.169.254, the cloud metadata
 * address, is one), unspecified, documentation, benchmarking, multicast and reserved ranges; the
 * IPv6 special-purpose ranges (IANA's registry: ORCHID, SRv6, the 2001::/23 protocol block with
 * Teredo, the 2001:db8::/32 and 3fff::/20 documentation prefixes…) and anything outside global
 * unicast 2000::/3, and IPv6 forms that carry an IPv4 address (IPv4-mapped ::ffff:a.b.c.d,
 * IPv4-translated ::ffff:0:a.b.c.d, IPv4-compatible, NAT64 64:ff9b::/96, 6to4 2002::/16) when
 * that address is refused. Names that only mean something inside a network (localhost, *.localhost,
 * *.local, *.internal such as metadata.google.internal, *.home.arpa, single-label names) are refused
 * before any lookup.
 *
 * Receivers on the developer's own machine (docs/webhooks.md, "Trying webhooks locally"): the
 * loopback host:port pairs listed in WEBHOOK_LOCAL_RECEIVERS (localhost, 127.0.0.1 or [::1] with a
 * port, checked when the configuration loads) are accepted, over http too, but only while NODE_ENV is
 * not production and the service's public origin is on this machine (no PUBLIC_URL, or a loopback
 * one): localReceiversOf. A URL naming such a pair must still resolve to loopback addresses only, and
 * nothing else is opened: not another port, not a private or link-local address.
 *
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS=true turns every refusal off: for the test suites only.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Config } from '../config.ts';
import { errorFirstLine } from '../lib/error-message.ts';

/** DNS as the worker and the registration use it; tests pass their own. Answers every address of the name. */
export type Lookup = (hostname: string) => Promise<string[]>;

export const systemLookup: Lookup = async (hostname) => (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

type Range = { base: bigint; bits: number; width: 32 | 128; reason: string };

function ipv4ToBigInt(ip: string): bigint | null {
  const parts = ip.split('.');
  if (parts.length !== 4) return null;
  let n = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    n = (n << 8n) | BigInt(Number(part));
  }
  return n;
}

/** An IPv6 text (with `::`, an IPv4 tail, or a `%zone`) as a 128-bit number; null when it is not one. */
function ipv6ToBigInt(text: string): bigint | null {
  let ip = text.replace(/^\[|\]$/g, '').split('%')[0]!.toLowerCase();
  // An IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const v4 = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(ip);
  if (v4) {
    const n = ipv4ToBigInt(v4[1]!);
    if (n === null) return null;
    ip = ip.slice(0, -v4[1]!.length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const halves = ip.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  let n = 0n;
  for (const group of groups) {
    if (!/^[0-9a-f]{1,4}$/.test(group)) return null;
    n = (n << 16n) | BigInt(parseInt(group, 16));
  }
  return n;
}

const range = (cidr: string, reason: string): Range => {
  const [base, bits] = cidr.split('/') as [string, string];
  const v4 = ipv4ToBigInt(base);
  return v4 !== null ? { base: v4, bits: Number(bits), width: 32, reason } : { base: ipv6ToBigInt(base)!, bits: Number(bits), width: 128, reason };
};

const IPV4_REFUSED: Range[] = [
  range('0.0.0.0/8', 'unspecified'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'shared address space'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local (cloud metadata)'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'IETF protocol assignments'),
  range('192.0.2.0/24', 'documentation'),
  range('192.88.99.0/24', '6to4 relay'),
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'benchmarking'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'),
];

/**
 * IPv6 ranges refused whatever they carry, after the IANA IPv6 Special-Purpose Address Registry
 * (https://www.iana.org/assignments/iana-ipv6-special-registry): every block not globally reachable,
 * and the whole IETF protocol assignments block 2001::/23 (its few globally reachable entries are
 * anycast services — TURN, PCP, AMT, AS112, drone remote ID — never a webhook receiver). The most
 * specific first, for the reason given. Everything outside global unicast 2000::/3 is refused too
 * (refusedAddressReason), except the IPv4 carriers below whose IPv4 address is public.
 */
const IPV6_REFUSED: Range[] = [
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('64:ff9b:1::/48', 'local-use NAT64'),
  range('100::/64', 'discard-only'),
  range('100:0:0:1::/64', 'dummy prefix'),
  range('2001::/32', 'Teredo'),
  range('2001:2::/48', 'benchmarking'),
  range('2001:10::/28', 'ORCHID (deprecated)'),
  range('2001:20::/28', 'ORCHIDv2'),
  range('2001::/23', 'IETF protocol assignments'),
  range('2001:db8::/32', 'documentation'),
  range('3fff::/20', 'documentation'),
  range('5f00::/16', 'segment routing (SRv6) SIDs'),
  range('fc00::/7', 'unique local (private)'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'site-local'),
  range('ff00::/8', 'multicast'),
];

/** Global unicast: the only IPv6 space assigned for public addresses (the IPv4 carriers aside). */
const GLOBAL_UNICAST = range('2000::/3', 'global unicast');

/** IPv6 prefixes that carry an IPv4 address: the IPv4 address decides. [prefix, where the IPv4 bits start from the right]. */
const IPV4_CARRIERS: { range: Range; shift: bigint }[] = [
  { range: range('::ffff:0:0/96', 'IPv4-mapped'), shift: 0n },
  { range: range('::ffff:0:0:0/96', 'IPv4-translated'), shift: 0n },
  { range: range('::/96', 'IPv4-compatible'), shift: 0n },
  { range: range('64:ff9b::/96', 'NAT64'), shift: 0n },
  { range: range('2002::/16', '6to4'), shift: 80n },
];

const within = (n: bigint, r: Range) => n >> BigInt(r.width - r.bits) === r.base >> BigInt(r.width - r.bits);

/** Why an IP address is refused, or null when it is a public address. */
export function refusedAddressReason(ip: string): string | null {
  const family = isIP(ip.replace(/^\[|\]$/g, '').split('%')[0]!);
  if (family === 4) {
    const n = ipv4ToBigInt(ip)!;
    return IPV4_REFUSED.find((r) => within(n, r))?.reason ?? null;
  }
  const n = ipv6ToBigInt(ip);
  if (family !== 6 || n === null) return 'not an IP address';
  const own = IPV6_REFUSED.find((r) => within(n, r));
  if (own) return own.reason;
  for (const carrier of IPV4_CARRIERS) {
    if (!within(n, carrier.range)) continue;
    const inner = IPV4_REFUSED.find((r) => within((n >> carrier.shift) & 0xffffffffn, r));
    return inner ? `${carrier.range.reason} ${inner.reason}` : null;
  }
  return within(n, GLOBAL_UNICAST) ? null : 'reserved (not global unicast)';
}

const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa', '.localdomain', '.lan', '.intranet', '.corp'];

/** Why a host name (not an IP literal) is refused before any lookup, or null. */
export function refusedHostnameReason(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || LOCAL_SUFFIXES.some((suffix) => host.endsWith(suffix))) return `${hostname} names a host inside a private network`;
  if (!host.includes('.')) return `${hostname} is not a fully qualified public host name`;
  return null;
}

export interface LocalReceivers {
  /** The host:port pairs deliveries may go to on this machine (lower case; IPv6 in brackets): none unless allowed. */
  receivers: string[];
  /** Why WEBHOOK_LOCAL_RECEIVERS, though set, is not applied here; null when it is (or is not set). */
  ignoredBecause: string | null;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The local receivers this server may deliver to: WEBHOOK_LOCAL_RECEIVERS, applied only on a
 * developer's machine: NODE_ENV is not production, and the service's own origin (PUBLIC_URL, by default
 * http://localhost:PORT) is a loopback one. A deployed server, which has one or the other, gets none.
 */
export function localReceiversOf(config: Pick<Config, 'nodeEnv' | 'auth' | 'webhooks'>): LocalReceivers {
  const listed = config.webhooks.localReceivers;
  if (!listed.length) return { receivers: [], ignoredBecause: null };
  if (config.nodeEnv === 'production') return { receivers: [], ignoredBecause: 'NODE_ENV is production' };
  const publicHost = new URL(config.auth.publicUrl).hostname;
  if (!LOOPBACK_NAMES.has(publicHost)) return { receivers: [], ignoredBecause: 'PUBLIC_URL is not on this machine' };
  return { receivers: listed, ignoredBecause: null };
}

/** Whether a URL names one of the local receivers (its host and port exactly; the scheme's port when none is written). */
export function isLocalReceiver(url: URL, receivers: readonly string[]): boolean {
  if (!receivers.length || (url.protocol !== 'http:' && url.protocol !== 'https:')) return false;
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return receivers.includes(`${url.hostname.toLowerCase()}:${port}`);
}

/** Whether a URL's host is a loopback name or address (for the hints of a refusal). */
export function isLoopbackHost(url: URL): boolean {
  const host = bareHost(url).toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && refusedAddressReason(host) === 'loopback');
}

/** The host of a URL as DNS and `isIP` want it (brackets of an IPv6 literal removed). */
export const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

export type Target = { ok: true; addresses: string[] } | { ok: false; refused: boolean; reason: string };

/**
 * The addresses a URL's host resolves to, every one of them checked (unless private networks are
 * allowed): public ones, or, for a URL naming one of `localReceivers` (localReceiversOf), loopback
 * ones only. `refused: true` for a policy refusal (a private address or name), false when the name
 * could not be resolved at all (which may pass).
 */
export async function resolveTarget(url: URL, options: { allowPrivate: boolean; localReceivers?: readonly string[]; lookup?: Lookup; timeoutMs: number }): Promise<Target> {
  const host = bareHost(url);
  const local = !options.allowPrivate && isLocalReceiver(url, options.localReceivers ?? []);
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else {
    if (!options.allowPrivate && !local) {
      const reason = refusedHostnameReason(host);
      if (reason) return { ok: false, refused: true, reason };
    }
    try {
      addresses = await withDeadline((options.lookup ?? systemLookup)(host), options.timeoutMs, `resolving ${host} took longer than ${options.timeoutMs} ms`);
    } catch (error) {
      const code = (error as { code?: string }).code;
      return { ok: false, refused: false, reason: code === 'ENOTFOUND' || code === 'ENODATA' ? `${host} does not resolve` : `cannot resolve ${host}: ${errorFirstLine(error)}` };
    }
    if (!addresses.length) return { ok: false, refused: false, reason: `${host} does not resolve` };
  }
  if (local) {
    for (const address of addresses) {
      if (refusedAddressReason(address) !== 'loopback') {
        return { ok: false, refused: true, reason: `${isIP(host) ? host : `${host} resolves to ${address}`}, not a loopback address (WEBHOOK_LOCAL_RECEIVERS names receivers on this machine only)` };
      }
    }
  } else if (!options.allowPrivate) {
    for (const address of addresses) {
      const reason = refusedAddressReason(address);
      if (reason) return { ok: false, refused: true, reason: `${isIP(host) ? host : `${host} resolves to ${address}`}, a ${reason} address` };
    }
  }
  return { ok: true, addresses };
}

function withDeadline<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(message), { code: 'ETIMEOUT' })), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
