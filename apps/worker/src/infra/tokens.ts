export const SETTINGS = Symbol('worker-settings');
export const LOGGER = Symbol('logger');
export const REDIS = Symbol('redis');
/** The connection of the worker's own RunQueue (wakes parked runs, the reaper's job lookups): BullMQ defines its scripts on it. */
export const QUEUE_REDIS = Symbol('queue-redis');
/** The Transport: the command and subscriber connections, the run event log and the session relay. */
export const TRANSPORT = Symbol('transport');
/** The TenantDirectory: each tenant's feature switches and workspace quota, cached briefly. */
export const TENANTS = Symbol('tenants');
export const STORE = Symbol('conversation-store');
export const MCP = Symbol('mcp-runtime');
export const STOP_TRACING = Symbol('stop-tracing');
