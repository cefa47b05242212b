import { jest } from '@jest/globals';
import { MemoryTenantStore, type TenantRecord } from './tenant.js';
import { FeatureSwitch, TenantDirectory, type TenantDefaults } from './tenant-directory.js';

const DEFAULTS: TenantDefaults = { maxUsers: 0, maxSessionsPerUser: 10, maxMcpServers: 5, workspaceQuotaBytes: 1024, maxConcurrentRuns: 0, requestsPerMinute: 600 };

function tenant(tenantId: string, patch: Partial<TenantRecord> = {}): TenantRecord {
  const at = new Date(0);
  return { tenantId, name: tenantId, maxUsers: null, maxSessionsPerUser: null, maxMcpServers: null, workspaceQuotaBytes: null, maxConcurrentRuns: null, requestsPerMinute: null, features: {}, createdAt: at, updatedAt: at, ...patch };
}

describe('TenantDirectory', () => {
  let clock = 0;
  const now = () => clock;

  it("gives a tenant its own limits where set and the deployment's elsewhere", async () => {
    const store = new MemoryTenantStore();
    await store.create(tenant('acme', { maxSessionsPerUser: 2, requestsPerMinute: 0 }));
    const directory = new TenantDirectory(store, DEFAULTS, { cacheMs: 1000, now });
    expect((await directory.policy('acme')).limits).toEqual({ ...DEFAULTS, maxSessionsPerUser: 2, requestsPerMinute: 0 });
    expect((await directory.policy('globex')).limits).toEqual(DEFAULTS);
    expect((await directory.policy('globex')).features.allOn).toBe(true);
  });

  it('ignores the store in single-tenant mode', async () => {
    const directory = new TenantDirectory(null, DEFAULTS, { cacheMs: 1000, now });
    expect((await directory.policy('acme')).limits).toEqual(DEFAULTS);
    expect(directory.perTenant).toBe(false);
  });

  it('reads a tenant again once the cache time has passed, and once for many callers at a time', async () => {
    const store = new MemoryTenantStore();
    await store.create(tenant('acme', { maxUsers: 1 }));
    const get = jest.spyOn(store, 'get');
    const directory = new TenantDirectory(store, DEFAULTS, { cacheMs: 1000, now });
    clock = 0;
    await Promise.all([directory.policy('acme'), directory.policy('acme'), directory.policy('acme')]);
    expect(get).toHaveBeenCalledTimes(1);
    await store.update('acme', { maxUsers: 7 }, new Date());
    clock = 999;
    expect((await directory.policy('acme')).limits.maxUsers).toBe(1);
    clock = 1000;
    expect((await directory.policy('acme')).limits.maxUsers).toBe(7);
    expect(get).toHaveBeenCalledTimes(2);
  });

  it('keeps using what it last read while the store fails, and fails when it never read the tenant', async () => {
    const store = new MemoryTenantStore();
    await store.create(tenant('acme', { maxUsers: 4 }));
    const directory = new TenantDirectory(store, DEFAULTS, { cacheMs: 10, now });
    clock = 0;
    await directory.policy('acme');
    jest.spyOn(store, 'get').mockRejectedValue(new Error('database down'));
    clock = 100;
    expect((await directory.policy('acme')).limits.maxUsers).toBe(4);
    await expect(directory.policy('globex')).rejects.toThrow('database down');
    expect(directory.peek('acme').limits.maxUsers).toBe(4);
    expect(directory.peek('globex').limits).toEqual(DEFAULTS);
  });
});

describe('FeatureSwitch', () => {
  it('allows everything a list leaves out, and only what a list names', () => {
    const all = FeatureSwitch.ALL_ON;
    expect([all.tool('http_request'), all.skill('x'), all.mcpServer('github'), all.allOn]).toEqual([true, true, true, true]);
    const some = new FeatureSwitch({ tools: ['read_file', 'shell'], mcp_servers: ['github'] });
    expect([some.tool('read_file'), some.tool('http_request'), some.skill('anything'), some.mcpServer('github'), some.mcpServer('jira'), some.allOn]).toEqual([true, false, true, true, false, false]);
  });

  it('keeps the shell off when shell is false, whatever the tool list says', () => {
    expect(new FeatureSwitch({ tools: ['shell'], shell: false }).tool('shell')).toBe(false);
    expect(new FeatureSwitch({ shell: false }).tool('read_file')).toBe(true);
    expect(new FeatureSwitch({ shell: false }).allOn).toBe(false);
    expect(FeatureSwitch.ALL_OFF.tool('write_todos')).toBe(false);
  });
});
