import { ConfigError, loadConfig } from '../config/env.js';
import { WorkspaceConfig } from './workspace-config.js';

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
