import { loadConfig } from '../config/env.js';
import { ToolsConfig } from './tools-config.js';

describe('DATAAGENT_OUTBOUND_ALLOWLIST', () => {
  it('is checked at startup, naming the bad entry', () => {
    expect(loadConfig(ToolsConfig, { DATAAGENT_OUTBOUND_ALLOWLIST: '127.0.0.1, *.corp.example, 10.0.0.0/8, localhost:8080' }, []).outboundAllowlist).toHaveLength(4);
    expect(() => loadConfig(ToolsConfig, { DATAAGENT_OUTBOUND_ALLOWLIST: '127.0.0.1,10.0.0.0/99' }, [])).toThrow(/DATAAGENT_OUTBOUND_ALLOWLIST: .*bad CIDR in allowlist: 10\.0\.0\.0\/99/);
  });
});
