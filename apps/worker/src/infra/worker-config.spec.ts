import { ConfigError } from '#core/config/env.js';
import { loadWorkerSettings } from './worker-config.js';

describe('loadWorkerSettings', () => {
  it('refuses a workspace template without {tenant_id} when several tenants share the deployment', () => {
    const load = (env: NodeJS.ProcessEnv) => () => loadWorkerSettings({ DATAAGENT_LLM_PROVIDER: 'offline', ...env }, []);
    expect(load({ DATAAGENT_MULTI_TENANT: 'true', DATAAGENT_WORKSPACE_ROOT: '/w/{user_id}' })).toThrow(ConfigError);
    expect(load({ DATAAGENT_MULTI_TENANT: 'true', DATAAGENT_WORKSPACE_ROOT: '/w/{user_id}' })).toThrow(/DATAAGENT_WORKSPACE_ROOT "\/w\/\{user_id\}" must contain \{tenant_id\}/);
    expect(load({ DATAAGENT_MULTI_TENANT: 'true', DATAAGENT_WORKSPACE_ROOT: '/w/{tenant_id}/{user_id}' })).not.toThrow();
    // The default names the tenant.
    expect(load({ DATAAGENT_MULTI_TENANT: 'true' })).not.toThrow();
    expect(load({ DATAAGENT_WORKSPACE_ROOT: '/w/{user_id}' })).not.toThrow();
  });

  it("reads its own settings, not the gateway's", () => {
    const settings = loadWorkerSettings({ DATAAGENT_LLM_PROVIDER: 'offline', DATAAGENT_PORT: 'not a port', DATAAGENT_SESSION_STORE: 'memory', DATAAGENT_WORKSPACE_QUOTA: '2GB' }, []);
    expect(settings.store.sessionStore).toBe('memory');
    expect(settings.workspace.quotaBytes).toBe(2 * 1024 ** 3);
    expect(settings).not.toHaveProperty('server');
  });

  it('refuses a model whose provider has no key, naming the variable, for the default and for each assistant', () => {
    const load = (env: NodeJS.ProcessEnv) => () => loadWorkerSettings(env, []);
    expect(load({ DATAAGENT_MODEL: 'anthropic:claude-sonnet-4-5' })).toThrow(/DATAAGENT_MODEL anthropic:claude-sonnet-4-5 needs ANTHROPIC_API_KEY/);
    expect(load({ DATAAGENT_MODEL: 'claude-sonnet-4-5' })).toThrow(/needs ANTHROPIC_API_KEY/);
    expect(load({ DATAAGENT_MODEL: 'openai:gpt-4o' })).toThrow(/needs OPENAI_API_KEY/);
    expect(load({ DATAAGENT_ASSISTANT_MODELS: 'default=anthropic:claude-x' })).toThrow(/DATAAGENT_ASSISTANT_MODELS: the assistant "default" uses anthropic:claude-x, which needs ANTHROPIC_API_KEY/);
    expect(load({ DATAAGENT_ASSISTANT_MODELS: 'default=anthropic:claude-x', ANTHROPIC_API_KEY: 'sk-ant-test' })).not.toThrow();
    // Without any key a bare name falls back to the offline model, so a quick start needs none.
    expect(load({})).not.toThrow();
    expect(load({ DATAAGENT_ASSISTANT_MODELS: 'nobody=offline' })).toThrow(/DATAAGENT_ASSISTANT_MODELS: .*there is no assistant "nobody"/);
  });

  it('names a bad workspace quota as a configuration error', () => {
    expect(() => loadWorkerSettings({ DATAAGENT_LLM_PROVIDER: 'offline', DATAAGENT_WORKSPACE_QUOTA: 'a lot' }, [])).toThrow(ConfigError);
    expect(() => loadWorkerSettings({ DATAAGENT_LLM_PROVIDER: 'offline', DATAAGENT_WORKSPACE_QUOTA: 'a lot' }, [])).toThrow(/DATAAGENT_WORKSPACE_QUOTA: .*must be a size: .*\(got "a lot"\)/);
  });
});
