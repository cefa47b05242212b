import { ConfigError, flagName, loadConfig, parseFlags } from './env.js';
import { LlmConfig, ServerConfig, WorkerConfig } from './settings.js';

describe('loadConfig', () => {
  it('uses defaults, reads the environment, and lets flags win', () => {
    expect(loadConfig(ServerConfig, {}, []).port).toBe(8000);
    expect(loadConfig(ServerConfig, { DATAAGENT_PORT: '9000' }, []).port).toBe(9000);
    expect(loadConfig(ServerConfig, { DATAAGENT_PORT: '9000' }, ['--port', '9100']).port).toBe(9100);
    expect(loadConfig(ServerConfig, {}, ['--port=9200']).port).toBe(9200);
    expect(loadConfig(ServerConfig, { DATAAGENT_API_KEYS: 'a, b ,,c' }, []).apiKeys).toEqual(['a', 'b', 'c']);
    expect(loadConfig(ServerConfig, { DATAAGENT_AUTH_DISABLED: 'yes' }, []).authDisabled).toBe(true);
  });

  it('names every bad variable with what it must be, hiding secrets', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig(ServerConfig, { DATAAGENT_PORT: 'abc', DATAAGENT_SESSION_STORE: 'postgres', DATAAGENT_AUTH_DISABLED: 'maybe' }, []);
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toHaveLength(3);
    expect(error!.message).toMatch(/DATAAGENT_PORT: .*integer.*\(got "abc"\)/);
    expect(error!.message).toMatch(/DATAAGENT_SESSION_STORE: .*mysql.*memory/);
    expect(error!.message).toMatch(/DATAAGENT_AUTH_DISABLED: must be true or false/);
    expect(() => loadConfig(ServerConfig, {}, ['--port', 'x'])).toThrow(/--port/);
    expect(() => loadConfig(LlmConfig, { OPENAI_BASE_URL: 'not a url', OPENAI_API_KEY: 'sk-secret' }, [])).toThrow(/OPENAI_BASE_URL/);
    expect(() => loadConfig(WorkerConfig, { DATAAGENT_WORKER_CONCURRENCY: '0' }, [])).toThrow(/DATAAGENT_WORKER_CONCURRENCY/);
  });

  it('derives flag names from variables', () => {
    expect(flagName('DATAAGENT_MYSQL_HOST')).toBe('--mysql-host');
    expect(flagName('OPENAI_BASE_URL')).toBe('--openai-base-url');
    expect(parseFlags(['--a', '1', '--b=2', '--c', '--d', 'x'])).toEqual(new Map([['--a', '1'], ['--b', '2'], ['--c', 'true'], ['--d', 'x']]));
  });
});
