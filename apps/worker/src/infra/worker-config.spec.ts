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
});
