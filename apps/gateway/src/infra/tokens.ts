export const SETTINGS = Symbol('gateway-settings');
export const REDIS = Symbol('redis');
export const SUBSCRIBER = Symbol('redis-subscriber');
export const STORE = Symbol('conversation-store');
export const STOP_TRACING = Symbol('stop-tracing');
