import type { RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';

export const MCP_SERVER_STATES = ['connected', 'connecting', 'disconnected', 'error', 'needs_authorization'] as const;
export type McpServerState = (typeof MCP_SERVER_STATES)[number];

/** One server's status for one user, as the worker that last checked it wrote it. */
export interface McpServerStatus {
  status: McpServerState;
  last_error: string | null;
  tool_count: number | null;
  /** ISO 8601. */
  last_check: string | null;
  worker_id: string | null;
}

/** How long a status stands unless a worker (or a sign-in's check) writes it again. */
export const MCP_STATUS_TTL_SECONDS = 300;

/** Records one server's status for one user (a worker's, or the gateway's check after a sign-in). */
export async function writeMcpStatus(redis: RedisClient, owner: { tenantId: string; userId: string }, name: string, status: McpServerStatus): Promise<void> {
  const key = redisKeys.mcpStatus(owner.tenantId, owner.userId);
  await redis.multi().hset(key, name, JSON.stringify(status)).expire(key, MCP_STATUS_TTL_SECONDS).exec();
}

/**
 * A user's MCP server statuses from {@link redisKeys.mcpStatus}, by server name. Entries that
 * are not valid JSON or have no known status are left out (the API shows them as unknown).
 */
export async function readMcpStatuses(redis: RedisClient, tenantId: string, userId: string): Promise<Map<string, McpServerStatus>> {
  const hash = await redis.hgetall(redisKeys.mcpStatus(tenantId, userId));
  const statuses = new Map<string, McpServerStatus>();
  for (const [name, raw] of Object.entries(hash)) {
    const status = parseStatus(raw);
    if (status) statuses.set(name, status);
  }
  return statuses;
}

function parseStatus(raw: string): McpServerStatus | null {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || !(MCP_SERVER_STATES as readonly unknown[]).includes(value.status)) return null;
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    status: value.status as McpServerState,
    last_error: text(value.last_error),
    tool_count: typeof value.tool_count === 'number' ? value.tool_count : null,
    last_check: text(value.last_check),
    worker_id: text(value.worker_id),
  };
}
