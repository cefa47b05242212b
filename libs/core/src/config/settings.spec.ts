import { ConfigError, loadConfig } from './env.js';
import { ServerConfig, StoreConfig, WorkerConfig, WorkspaceConfig } from './settings.js';

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
});

describe('WorkspaceConfig', () => {
  it('reads the template, a quota with or without a unit, and the archive schedule', () => {
    const config = loadConfig(WorkspaceConfig, { DATAAGENT_WORKSPACE_ROOT: '/w/{user_id}', DATAAGENT_WORKSPACE_QUOTA: '500MB', DATAAGENT_WORKSPACE_ARCHIVE_DAYS: '0' }, []);
    expect(config).toMatchObject({ rootTemplate: '/w/{user_id}', quotaBytes: 500 * 1024 ** 2, archiveDays: 0, archiveIntervalSeconds: 3600 });
    expect(loadConfig(WorkspaceConfig, {}, [])).toMatchObject({ rootTemplate: '/data/workspaces/{tenant_id}/{user_id}', quotaBytes: 1024 ** 3, archiveDays: 30 });
    expect(loadConfig(WorkspaceConfig, { DATAAGENT_WORKSPACE_QUOTA: '1.5 KiB' }, []).quotaBytes).toBe(1536);
    expect(loadConfig(WorkspaceConfig, { DATAAGENT_WORKSPACE_QUOTA: '2048' }, []).quotaBytes).toBe(2048);
    expect(loadConfig(WorkspaceConfig, {}, ['--workspace-quota', '1GB']).quotaBytes).toBe(1024 ** 3);
  });

  it('names each bad variable at once', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig(WorkspaceConfig, { DATAAGENT_WORKSPACE_QUOTA: 'lots', DATAAGENT_WORKSPACE_ARCHIVE_DAYS: '-1', DATAAGENT_WORKSPACE_ARCHIVE_INTERVAL_SECONDS: 'hourly' }, []);
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toHaveLength(3);
    expect(error!.message).toMatch(/DATAAGENT_WORKSPACE_QUOTA: .*must be a size: bytes, or with a unit .*\(got "lots"\)/);
    expect(error!.message).toMatch(/DATAAGENT_WORKSPACE_ARCHIVE_DAYS: .*\(got -1\)/);
    expect(error!.message).toMatch(/DATAAGENT_WORKSPACE_ARCHIVE_INTERVAL_SECONDS: .*must be a number of seconds/);
  });
});
