import type { McpRuntimeConfig } from '#core/config/mcp-settings.js';
import { checkOutboundUrl } from '#core/tools/builtin/net/outbound-guard.js';
import { MCP_POOL_DEFAULTS, type McpPoolOptions } from './mcp-pool.js';

/**
 * A worker's pool options from its configuration: caps, timeouts, the health interval, the bytes
 * one message may have, and the outbound address check for remote servers (no private or loopback
 * address unless allowlisted, as for http_request), whose approved address each connection is pinned to.
 */
export function poolOptionsFor(config: McpRuntimeConfig, maxServersPerUser: number, outboundAllowlist: readonly string[]): McpPoolOptions {
  return {
    ...MCP_POOL_DEFAULTS,
    maxPerUser: maxServersPerUser,
    maxConnections: config.maxConnections,
    connectTimeoutMs: config.connectTimeoutSeconds * 1000,
    idleMs: config.idleSeconds * 1000,
    pingIntervalMs: config.pingIntervalSeconds * 1000,
    maxMessageBytes: config.maxMessageBytes,
    checkUrl: (url) => checkOutboundUrl(url, { allowlist: outboundAllowlist }),
  };
}
