import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

type IP = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Parses an IPv4 address the way the WHATWG URL parser and inet_aton do: one to four
 * parts, each decimal, octal (leading 0) or hex (0x), the last part filling the remaining
 * bytes, an optional trailing dot. So 2130706433, 0x7f000001, 0177.0.0.1 and 127.1 are
 * all 127.0.0.1.
 * @returns the four octets, or null when the text is not an IPv4 address in any spelling.
 */
export function parseIPv4Loose(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 0 || parts.length > 4) return null;
  const numbers: number[] = [];
  for (const part of parts) {
    const n = parseIPv4Part(part);
    if (n === null) return null;
    numbers.push(n);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255)) return null;
  if (last >= 256 ** (4 - numbers.length)) return null;
  const octets = [...numbers];
  for (let i = 3 - numbers.length; i >= 0; i--) octets.push(Math.floor(last / 256 ** i) % 256);
  return octets;
}

function parseIPv4Part(part: string): number | null {
  if (part === '') return null;
  let digits = part;
  let radix = 10;
  if (/^0x/i.test(part)) {
    digits = part.slice(2);
    radix = 16;
    if (digits === '') return 0;
  } else if (part.length > 1 && part.startsWith('0')) {
    digits = part.slice(1);
    radix = 8;
  }
  const valid = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!valid.test(digits)) return null;
  const n = parseInt(digits, radix);
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * Parses an IP address in any spelling: loose IPv4 (see {@link parseIPv4Loose}), IPv6
 * with or without brackets and zone id.
 * @returns the address, or null when the text is not an IP address.
 */
export function parseIP(text: string): IP | null {
  let s = text.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  if (s.includes(':')) {
    const zone = s.indexOf('%');
    if (zone >= 0) s = s.slice(0, zone);
    // ipaddr.js reads '::a.b.c.d' as IPv4-mapped; spell the dotted tail in hex so it is not.
    s = s.replace(/:(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/, (whole, a: string, b: string, c: string, d: string) => {
      const o = [a, b, c, d].map(Number);
      if (o.some((n) => n > 255)) return whole;
      return `:${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
    });
    return ipaddr.IPv6.isValid(s) ? ipaddr.IPv6.parse(s) : null;
  }
  const octets = parseIPv4Loose(s);
  return octets ? new ipaddr.IPv4(octets) : null;
}

function embeddedIPv4(ip: ipaddr.IPv6, highWord: number): ipaddr.IPv4 {
  const p = ip.parts;
  return new ipaddr.IPv4([p[highWord]! >> 8, p[highWord]! & 0xff, p[highWord + 1]! >> 8, p[highWord + 1]! & 0xff]);
}

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_LOCAL_USE = ipaddr.IPv6.parseCIDR('64:ff9b:1::/48');

function isForbiddenIP(ip: IP): boolean {
  if (ip.kind() === 'ipv4') return (ip as ipaddr.IPv4).range() !== 'unicast';
  const v6 = ip as ipaddr.IPv6;
  const p = v6.parts;
  // IPv4-compatible (::a.b.c.d, deprecated) includes :: and ::1; nothing legitimate lives there.
  if (p.slice(0, 6).every((w) => w === 0)) return true;
  // Local-use NAT64 embeds IPv4 at a position only the local translator knows.
  if (v6.match(NAT64_LOCAL_USE)) return true;
  switch (v6.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
    case 'rfc6052': // 64:ff9b::a.b.c.d (NAT64)
      return isForbiddenIP(embeddedIPv4(v6, 6));
    case '6to4': // 2002:aabb:ccdd::
      return isForbiddenIP(embeddedIPv4(v6, 1));
    case 'unicast':
      return !v6.match(GLOBAL_UNICAST_V6);
    default: // loopback, link-local, unique-local, multicast, teredo, documentation, ...
      return true;
  }
}

/**
 * Whether an outbound request must not reach this address: loopback, private, link-local
 * (cloud metadata 169.254.169.254), unique-local, unspecified, CGNAT, multicast, broadcast,
 * reserved, and IPv6 forms that embed such an IPv4 address (mapped, compatible, NAT64, 6to4).
 * Text that is not an IP address in any spelling counts as forbidden (fail closed).
 */
export function isForbiddenAddress(ip: string): boolean {
  const parsed = parseIP(ip);
  return parsed === null || isForbiddenIP(parsed);
}

/** One parsed allowlist entry. */
export type AllowRule =
  | { kind: 'host'; host: string; port?: number }
  | { kind: 'suffix'; suffix: string; port?: number }
  | { kind: 'ip'; ip: IP; port?: number }
  | { kind: 'cidr'; range: [IP, number] };

export class InvalidAllowlistEntryError extends Error {}

/**
 * Parses allowlist entries: host names (`api.internal`), wildcard suffixes (`*.corp.example`),
 * IPs in any spelling (`10.0.0.5`, `::1`), CIDRs (`10.0.0.0/8`, `fd00::/8`), and any host or
 * IP with a port (`localhost:8080`, `127.0.0.1:9000`, `[::1]:9000`).
 * @throws InvalidAllowlistEntryError for an entry that is none of these.
 */
export function parseAllowlist(entries: readonly string[]): AllowRule[] {
  return entries.map((raw) => parseAllowEntry(raw.trim().toLowerCase(), raw));
}

function parseAllowEntry(entry: string, raw: string): AllowRule {
  if (entry.includes('/')) {
    const [addr, bits] = entry.split('/', 2) as [string, string];
    const ip = parseIP(addr);
    const prefix = Number(bits);
    const max = ip?.kind() === 'ipv4' ? 32 : 128;
    if (!ip || !/^\d+$/.test(bits) || prefix > max) throw new InvalidAllowlistEntryError(`bad CIDR in allowlist: ${raw}`);
    return { kind: 'cidr', range: [ip, prefix] };
  }
  let host = entry;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  const hostPort = /^([^:]+):(\d+)$/.exec(entry);
  if (bracketed) {
    host = bracketed[1]!;
    port = bracketed[2] === undefined ? undefined : Number(bracketed[2]);
  } else if (hostPort) {
    host = hostPort[1]!;
    port = Number(hostPort[2]);
  }
  if (port !== undefined && (port < 1 || port > 65535)) throw new InvalidAllowlistEntryError(`bad port in allowlist: ${raw}`);
  const ip = parseIP(host);
  if (ip) return { kind: 'ip', ip: normalise(ip), port };
  if (bracketed) throw new InvalidAllowlistEntryError(`bad IPv6 address in allowlist: ${raw}`);
  const name = host.replace(/\.$/, '');
  if (name.startsWith('*.') && isHostName(name.slice(2))) return { kind: 'suffix', suffix: name.slice(1), port };
  if (isHostName(name)) return { kind: 'host', host: name, port };
  throw new InvalidAllowlistEntryError(`bad allowlist entry: ${raw}`);
}

function isHostName(name: string): boolean {
  return /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(name);
}

/** IPv4-mapped IPv6 becomes IPv4 so `::ffff:10.0.0.1` matches a `10.0.0.0/8` rule. */
function normalise(ip: IP): IP {
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

function hostAllowed(rules: readonly AllowRule[], host: string, port: number): boolean {
  return rules.some(
    (r) =>
      (r.kind === 'host' && r.host === host && (r.port === undefined || r.port === port)) ||
      (r.kind === 'suffix' && host.endsWith(r.suffix) && (r.port === undefined || r.port === port)),
  );
}

function addressAllowed(rules: readonly AllowRule[], address: IP, port: number): boolean {
  const ip = normalise(address);
  return rules.some((r) => {
    if (r.kind === 'ip') return r.ip.kind() === ip.kind() && r.ip.toNormalizedString() === ip.toNormalizedString() && (r.port === undefined || r.port === port);
    if (r.kind === 'cidr') return r.range[0].kind() === ip.kind() && ip.match(r.range);
    return false;
  });
}

/**
 * Resolves a host name to every address it has. `signal` aborts when the answer is no longer
 * wanted; a resolver that cannot be cancelled may ignore it (the check stops waiting anyway).
 */
export type Resolver = (hostname: string, signal?: AbortSignal) => Promise<string[]>;

/** getaddrinfo cannot be cancelled: a lookup that outlives its check finishes unobserved. */
export const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Milliseconds a DNS lookup may take before the request gives up on it. */
export const DNS_LOOKUP_TIMEOUT_MS = 5_000;

export interface OutboundPolicy {
  /** Entries that open otherwise forbidden targets; see {@link parseAllowlist}. */
  allowlist?: readonly string[] | readonly AllowRule[];
  /** DNS resolution; the system resolver when absent (tests inject a fake). */
  resolver?: Resolver;
  /** Milliseconds one DNS lookup may take. Default {@link DNS_LOOKUP_TIMEOUT_MS}. */
  lookupTimeoutMs?: number;
}

export type OutboundCheck =
  | { ok: true; url: URL; address: string; family: 4 | 6 }
  | {
      ok: false;
      reason: string;
      /** Set when the check could not finish: its DNS lookup timed out, or `signal` aborted it. */
      interrupted?: 'timeout' | 'aborted';
    };

/**
 * Decides whether an outbound HTTP request may go to `url`: only http(s), and every address
 * the host resolves to must be public or opened by the allowlist (one private answer among
 * public ones refuses the whole host, since the attacker picks the order).
 * @param signal Stops waiting for DNS (the request's deadline or cancel); the lookup has its
 * own limit too, `policy.lookupTimeoutMs`.
 * @returns the address to connect to (pin it), or the reason for refusing.
 */
export async function checkOutboundUrl(url: string | URL, policy: OutboundPolicy = {}, signal?: AbortSignal): Promise<OutboundCheck> {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    return { ok: false, reason: 'invalid URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { ok: false, reason: `scheme ${parsed.protocol} is not allowed` };
  const rules = toAllowRules(policy.allowlist);
  const host = parsed.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (host === '') return { ok: false, reason: 'URL has no host' };
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;

  const literal = parseIP(host);
  let addresses: IP[];
  if (literal) {
    addresses = [literal];
  } else {
    const timeoutMs = policy.lookupTimeoutMs ?? DNS_LOOKUP_TIMEOUT_MS;
    const deadline = AbortSignal.timeout(timeoutMs);
    const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      const answers = await untilAborted((policy.resolver ?? systemResolver)(host, stop), stop);
      addresses = answers.map((a) => parseIP(a)).filter((a): a is IP => a !== null);
    } catch (err) {
      if (signal?.aborted) return { ok: false, reason: `DNS lookup of ${host} aborted`, interrupted: 'aborted' };
      if (deadline.aborted) return { ok: false, reason: `DNS lookup of ${host} got no answer within ${timeoutMs} ms`, interrupted: 'timeout' };
      return { ok: false, reason: `cannot resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
    }
    if (addresses.length === 0) return { ok: false, reason: `cannot resolve ${host}` };
  }
  const trustedName = !literal && hostAllowed(rules, host, port);
  for (const address of addresses) {
    if (trustedName || !isForbiddenIP(address) || addressAllowed(rules, address, port)) continue;
    const shown = literal ? host : `${host} (${address.toString()})`;
    return { ok: false, reason: `destination ${shown} port ${port} is a private, loopback or otherwise internal address and is not allowlisted` };
  }
  const chosen = normalise(addresses[0]!);
  return { ok: true, url: parsed, address: chosen.toString(), family: chosen.kind() === 'ipv4' ? 4 : 6 };
}

/** Settles like `work`, or rejects with the abort reason as soon as `signal` aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Parses string entries once so callers checking many URLs can pass the rules around. */
export function toAllowRules(allowlist: OutboundPolicy['allowlist']): AllowRule[] {
  if (!allowlist || allowlist.length === 0) return [];
  return typeof allowlist[0] === 'string' ? parseAllowlist(allowlist as readonly string[]) : [...(allowlist as readonly AllowRule[])];
}
