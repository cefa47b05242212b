import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../common/api-error.js';

export interface OriginPolicyOptions {
  authDisabled: boolean;
  /** DATAAGENT_CORS_ORIGINS: `*` or exact origins such as `https://app.example.com`. */
  corsOrigins: string[];
  /** DATAAGENT_ALLOWED_HOSTS: host names trusted besides loopback while auth is off. */
  allowedHosts: string[];
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** `localhost`, `127.0.0.1`, `[::1]` (any port); every other name, `*.localhost` included, is not. */
export function isLoopbackHostname(hostname: string): boolean {
  return LOOPBACK_NAMES.has(hostname.toLowerCase());
}

/** The host name of a Host header (`name[:port]`, `[v6][:port]`), lower-cased; null when malformed. */
export function hostnameOf(hostHeader: string | undefined): string | null {
  if (!hostHeader) return null;
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i.exec(hostHeader.trim());
  return match ? match[1].toLowerCase() : null;
}

/** The host name of an Origin header (`scheme://host[:port]`); null when it is not an http(s) origin. */
export function originHostname(origin: string): string | null {
  try {
    const url = new URL(origin);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin.replace(/\/$/, '')) return null;
    return url.hostname.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Which browser origins and Host headers the gateway serves.
 *
 * With auth off (the quick start), any web page the developer visits could otherwise call the
 * API from the browser, and a DNS-rebinding page could even read the answers: only loopback
 * Host headers and loopback origins are accepted then (plus DATAAGENT_ALLOWED_HOSTS). With auth
 * on, a caller needs a key anyway and CORS follows DATAAGENT_CORS_ORIGINS exactly.
 */
export class OriginPolicy {
  private readonly anyOrigin: boolean;
  private readonly origins: Set<string>;
  private readonly hosts: Set<string>;

  constructor(private readonly options: OriginPolicyOptions) {
    this.anyOrigin = options.corsOrigins.includes('*');
    this.origins = new Set(options.corsOrigins.filter((o) => o !== '*').map((o) => o.replace(/\/$/, '').toLowerCase()));
    this.hosts = new Set(options.allowedHosts.map((h) => h.toLowerCase()));
  }

  /** Whether a browser page from `origin` may call the gateway (CORS and socket handshakes). */
  allowsOrigin(origin: string): boolean {
    if (this.options.authDisabled) {
      const hostname = originHostname(origin);
      return hostname !== null && (isLoopbackHostname(hostname) || this.hosts.has(hostname));
    }
    return this.anyOrigin || this.origins.has(origin.replace(/\/$/, '').toLowerCase());
  }

  /**
   * Checks a request's Host and Origin headers before anything else sees it.
   * @throws ApiError 403 `host_not_allowed` or `origin_not_allowed`.
   */
  check(headers: IncomingHttpHeaders): void {
    if (this.options.authDisabled) {
      const hostname = hostnameOf(headers.host);
      if (hostname === null || !(isLoopbackHostname(hostname) || this.hosts.has(hostname))) {
        throw new ApiError(403, 'host_not_allowed', 'Authentication is off, so only loopback Host names are served; set DATAAGENT_API_KEYS or DATAAGENT_ALLOWED_HOSTS', {});
      }
    }
    const origin = headers.origin;
    if (origin !== undefined && !this.sameOrigin(origin, headers.host) && !this.allowsOrigin(origin)) {
      throw new ApiError(403, 'origin_not_allowed', 'This origin may not call the gateway; see DATAAGENT_CORS_ORIGINS', {});
    }
  }

  /** A page served by the gateway itself (the web UI) calling back home. */
  private sameOrigin(origin: string, host: string | undefined): boolean {
    try {
      return host !== undefined && new URL(origin).host === host.toLowerCase();
    } catch {
      return false;
    }
  }

  /** Options for the `cors` middleware and Socket.IO's `cors`. */
  corsOptions(): { origin: (origin: string | undefined, cb: (err: Error | null, allow?: boolean) => void) => void; credentials: boolean; exposedHeaders: string[] } {
    return {
      origin: (origin, cb) => cb(null, origin === undefined ? false : this.allowsOrigin(origin)),
      // Keys travel in a header, never in cookies: no page needs credentialed requests.
      credentials: false,
      // A page continues an OpenAI-style conversation by the session these name, and backs off by Retry-After.
      exposedHeaders: ['X-DataAgent-Session', 'X-DataAgent-Run', 'X-Request-Id', 'Retry-After'],
    };
  }
}
