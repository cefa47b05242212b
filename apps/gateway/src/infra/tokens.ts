export const SETTINGS = Symbol('gateway-settings');
export const REDIS = Symbol('redis');
/** The Transport: the command and subscriber connections, the run event log and the session relay. */
export const TRANSPORT = Symbol('transport');
/** The connection control messages (cancel, HITL decisions) are published on. */
export const CONTROL_REDIS = Symbol('redis-control');
/** The run queue's connection: BullMQ's scripts stay off the command connection (see InfraModule). */
export const QUEUE_REDIS = Symbol('redis-queue');
export const STORE = Symbol('conversation-store');
/** The TenantDirectory: each tenant's limits, cached briefly. */
export const TENANTS = Symbol('tenants');
export const STOP_TRACING = Symbol('stop-tracing');
