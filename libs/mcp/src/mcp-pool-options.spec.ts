import { loadConfig } from '#core/config/env.js';
import { McpRuntimeConfig } from '#core/config/mcp-settings.js';
import { poolOptionsFor } from './mcp-pool-options.js';

describe('poolOptionsFor', () => {
  it('carries DATAAGENT_MCP_MAX_MESSAGE_BYTES to the pool (4 MiB by default) and refuses a tiny one at startup', () => {
    expect(poolOptionsFor(loadConfig(McpRuntimeConfig, {}, []), 5, []).maxMessageBytes).toBe(4 * 1024 * 1024);
    expect(poolOptionsFor(loadConfig(McpRuntimeConfig, { DATAAGENT_MCP_MAX_MESSAGE_BYTES: '65536' }, []), 5, []).maxMessageBytes).toBe(65_536);
    expect(() => loadConfig(McpRuntimeConfig, { DATAAGENT_MCP_MAX_MESSAGE_BYTES: '10' }, [])).toThrow(/DATAAGENT_MCP_MAX_MESSAGE_BYTES/);
  });

  it('checks a remote server’s URL and answers the address to pin the connection to', async () => {
    const config = loadConfig(McpRuntimeConfig, {}, []);
    expect(await poolOptionsFor(config, 5, ['127.0.0.1:9']).checkUrl!('http://127.0.0.1:9/mcp')).toMatchObject({ ok: true, address: '127.0.0.1', family: 4 });
    expect(await poolOptionsFor(config, 5, []).checkUrl!('http://127.0.0.1:9/mcp')).toMatchObject({ ok: false, reason: expect.stringContaining('not allowlisted') });
  });
});
