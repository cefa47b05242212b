import { defaultTenantCpus } from '../sandbox/sandbox-setup.js';
import { ConfigError, loadConfig } from './env.js';
import { SandboxConfig } from './sandbox-settings.js';

describe('SandboxConfig CPU bounds', () => {
  it('reads CPUs per sandbox and per tenant as numbers, the tenant one unset by default', () => {
    expect(loadConfig(SandboxConfig, {}, [])).toMatchObject({ cpus: 1, tenantCpus: undefined });
    expect(loadConfig(SandboxConfig, { DATAAGENT_SANDBOX_CPUS: '0.5', DATAAGENT_SANDBOX_TENANT_CPUS: '3' }, [])).toMatchObject({ cpus: 0.5, tenantCpus: 3 });
  });

  it('refuses what is not a number of CPUs, naming the variable', () => {
    expect(() => loadConfig(SandboxConfig, { DATAAGENT_SANDBOX_CPUS: 'lots' }, [])).toThrow(ConfigError);
    expect(() => loadConfig(SandboxConfig, { DATAAGENT_SANDBOX_TENANT_CPUS: '0' }, [])).toThrow(/DATAAGENT_SANDBOX_TENANT_CPUS/);
  });

  it('gives a tenant half the host by default, at least one CPU', () => {
    expect([defaultTenantCpus(1), defaultTenantCpus(2), defaultTenantCpus(3), defaultTenantCpus(16)]).toEqual([1, 1, 1, 8]);
  });
});
