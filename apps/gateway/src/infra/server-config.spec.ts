import { ConfigError, loadConfig } from '#core/config/env.js';
import { LogConfig, StoreConfig, WorkerConfig } from '#core/config/settings.js';
import { ServerConfig } from './server-config.js';

describe('settings with one owner each', () => {
  it('keeps the approval wait and the approve_all lifetime apart', () => {
    const env = { DATAAGENT_HITL_TIMEOUT: '45', DATAAGENT_HITL_APPROVE_ALL_SECONDS: '600' };
    expect(loadConfig(WorkerConfig, env, []).hitlTimeoutSeconds).toBe(45);
    expect(loadConfig(ServerConfig, env, []).hitlApproveAllSeconds).toBe(600);
    // The wait no longer moves the approve_all lifetime, nor the other way round.
    expect(loadConfig(ServerConfig, { DATAAGENT_HITL_TIMEOUT: '45' }, []).hitlApproveAllSeconds).toBeUndefined();
    expect(loadConfig(WorkerConfig, { DATAAGENT_HITL_APPROVE_ALL_SECONDS: '600' }, []).hitlTimeoutSeconds).toBe(300);
    expect(() => loadConfig(ServerConfig, { DATAAGENT_HITL_APPROVE_ALL_SECONDS: 'forever' }, [])).toThrow(/DATAAGENT_HITL_APPROVE_ALL_SECONDS: .*must be a number of seconds/);
  });

  it('reads the session store from its own class', () => {
    expect(loadConfig(StoreConfig, { DATAAGENT_SESSION_STORE: 'memory' }, []).sessionStore).toBe('memory');
    expect(() => loadConfig(StoreConfig, { DATAAGENT_SESSION_STORE: 'postgres' }, [])).toThrow(/DATAAGENT_SESSION_STORE: .*mysql.*memory/);
    expect(loadConfig(ServerConfig, {}, [])).not.toHaveProperty('sessionStore');
  });

  it('reads DATAAGENT_LOG_LEVEL in one class, for the gateway and the workers alike', () => {
    expect(loadConfig(LogConfig, { DATAAGENT_LOG_LEVEL: 'debug' }, []).level).toBe('debug');
    expect(() => loadConfig(LogConfig, { DATAAGENT_LOG_LEVEL: 'loud' }, [])).toThrow(/DATAAGENT_LOG_LEVEL: /);
    expect(loadConfig(ServerConfig, { DATAAGENT_LOG_LEVEL: 'debug' }, [])).not.toHaveProperty('logLevel');
    expect(loadConfig(WorkerConfig, { DATAAGENT_LOG_LEVEL: 'debug' }, [])).not.toHaveProperty('logLevel');
  });
});

describe('DATAAGENT_API_KEYS in the server config', () => {
  it('accepts the keys the tests, the benchmark and the README use', () => {
    const keys = 'test-key-alice:acme:alice,test-key-bob:acme:bob,bench-api-key:bench:load,0123456789abcdef0123456789abcdef';
    expect(loadConfig(ServerConfig, { DATAAGENT_API_KEYS: keys }, []).apiKeys).toHaveLength(4);
  });

  it('refuses bad entries with the other problems, naming entries, hiding keys', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig(ServerConfig, { DATAAGENT_API_KEYS: 'fine-key-0001:acme:alice,my-secret-key:acme:bob:superuser', DATAAGENT_PORT: 'x' }, []);
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toHaveLength(2);
    expect(error!.message).toMatch(/DATAAGENT_API_KEYS: entry 2: the role "superuser" is not one of user, admin, operator/);
    expect(error!.message).not.toContain('my-secret-key');
    expect(error!.message).not.toContain('fine-key-0001');
  });
});
