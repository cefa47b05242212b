import { IsBoolean, IsIn, IsInt, IsString, Max, Min } from 'class-validator';
import { ConfigError, Env, flagName, loadConfig, parseFlags, redactUrlCredentials } from './env.js';
import { LlmConfig, RedisConfig, WorkerConfig } from './settings.js';

/** A config class of each kind of field the loader reads (the gateway's own lives with the gateway). */
class ExampleConfig {
  @Env('DATAAGENT_PORT', 'int') @IsInt({ message: 'must be an integer port' }) @Min(0) @Max(65535)
  port = 8000;

  @Env('DATAAGENT_AUTH_DISABLED', 'bool') @IsBoolean({ message: 'must be true or false' })
  authDisabled = false;

  @Env('DATAAGENT_CORS_ORIGINS', 'list') @IsString({ each: true })
  corsOrigins: string[] = ['*'];

  @Env('DATAAGENT_MULTITASK') @IsIn(['reject', 'enqueue', 'interrupt'])
  multitask: 'reject' | 'enqueue' | 'interrupt' = 'reject';
}

describe('loadConfig', () => {
  it('uses defaults, reads the environment, and lets flags win', () => {
    expect(loadConfig(ExampleConfig, {}, []).port).toBe(8000);
    expect(loadConfig(ExampleConfig, { DATAAGENT_PORT: '9000' }, []).port).toBe(9000);
    expect(loadConfig(ExampleConfig, { DATAAGENT_PORT: '9000' }, ['--port', '9100']).port).toBe(9100);
    expect(loadConfig(ExampleConfig, {}, ['--port=9200']).port).toBe(9200);
    expect(loadConfig(ExampleConfig, { DATAAGENT_CORS_ORIGINS: 'a, b ,,c' }, []).corsOrigins).toEqual(['a', 'b', 'c']);
    expect(loadConfig(ExampleConfig, { DATAAGENT_AUTH_DISABLED: 'yes' }, []).authDisabled).toBe(true);
  });

  it('names every bad variable with what it must be, hiding secrets', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig(ExampleConfig, { DATAAGENT_PORT: 'abc', DATAAGENT_MULTITASK: 'sometimes', DATAAGENT_AUTH_DISABLED: 'maybe' }, []);
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toHaveLength(3);
    expect(error!.message).toMatch(/DATAAGENT_PORT: .*integer.*\(got "abc"\)/);
    expect(error!.message).toMatch(/DATAAGENT_MULTITASK: .*reject.*enqueue.*interrupt/);
    expect(error!.message).toMatch(/DATAAGENT_AUTH_DISABLED: must be true or false/);
    expect(() => loadConfig(ExampleConfig, {}, ['--port', 'x'])).toThrow(/--port/);
    expect(() => loadConfig(LlmConfig, { OPENAI_BASE_URL: 'not a url', OPENAI_API_KEY: 'sk-secret' }, [])).toThrow(/OPENAI_BASE_URL/);
    expect(() => loadConfig(WorkerConfig, { DATAAGENT_WORKER_CONCURRENCY: '0' }, [])).toThrow(/DATAAGENT_WORKER_CONCURRENCY/);
  });

  it('shows a bad URL without its user name and password', () => {
    const message = (env: NodeJS.ProcessEnv) => {
      try {
        loadConfig(RedisConfig, env, []);
      } catch (e) {
        return (e as ConfigError).message;
      }
      throw new Error('expected a ConfigError');
    };
    const redis = message({ DATAAGENT_REDIS_URL: 'http://:hunter2@cache.internal:6379' });
    expect(redis).toContain('DATAAGENT_REDIS_URL');
    expect(redis).toContain('(got "http://:***@cache.internal:6379")');
    expect(redis).not.toContain('hunter2');
    const withUser = message({ DATAAGENT_REDIS_URL: 'redis://admin:hunter2@' });
    expect(withUser).toContain('redis://***:***@');
    expect(withUser).not.toMatch(/admin|hunter2/);
  });

  it('redacts user info even where a URL parser would not find it', () => {
    expect(redactUrlCredentials('redis://:p/a#s@host:6379/0')).toBe('redis://:***@host:6379/0');
    expect(redactUrlCredentials('rediss://token@host')).toBe('rediss://***@host');
    expect(redactUrlCredentials(['ok', 'https://u:p@x.example/'])).toEqual(['ok', 'https://***:***@x.example/']);
    expect(redactUrlCredentials('redis://host:6379')).toBe('redis://host:6379');
    expect(redactUrlCredentials('not a url: a@b')).toBe('not a url: a@b');
    expect(redactUrlCredentials(42)).toBe(42);
  });

  it('reads a Redis Cluster as its seed nodes, and names a bad entry', () => {
    expect(loadConfig(RedisConfig, {}, []).clusterNodes).toEqual([]);
    expect(loadConfig(RedisConfig, { DATAAGENT_REDIS_CLUSTER_NODES: 'redis-0.internal:6379, 10.0.0.5:7000,[::1]:7001' }, []).clusterNodes).toEqual(['redis-0.internal:6379', '10.0.0.5:7000', '[::1]:7001']);
    expect(() => loadConfig(RedisConfig, { DATAAGENT_REDIS_CLUSTER_NODES: 'redis-0.internal:6379,redis-1.internal' }, [])).toThrow(/DATAAGENT_REDIS_CLUSTER_NODES.*host:port/);
  });

  it('derives flag names from variables', () => {
    expect(flagName('DATAAGENT_MYSQL_HOST')).toBe('--mysql-host');
    expect(flagName('OPENAI_BASE_URL')).toBe('--openai-base-url');
    expect(parseFlags(['--a', '1', '--b=2', '--c', '--d', 'x'])).toEqual(new Map([['--a', '1'], ['--b', '2'], ['--c', 'true'], ['--d', 'x']]));
  });
});
