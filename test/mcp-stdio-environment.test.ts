import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpConnection } from '#mcp/mcp-connection.js';
import { FAULT_SERVER, FaultRecord } from './support/mcp-fault-servers.js';

/**
 * What a stdio server started through a real connection finds in its environment: PATH and the
 * safe base of the starting process, and the variables its configuration declares. Nothing else
 * of the worker's: not its login and shell (which the MCP SDK's default environment copies), not
 * its keys and settings.
 */
describe("a stdio server's environment", () => {
  let dir: string;
  const saved = { LOGNAME: process.env.LOGNAME, SHELL: process.env.SHELL, OPENAI_API_KEY: process.env.OPENAI_API_KEY };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'da-stdio-env-'));
    // A worker's variables, set here so the test does not depend on the machine's.
    Object.assign(process.env, { LOGNAME: 'da-worker', SHELL: '/bin/bash', OPENAI_API_KEY: 'sk-worker-secret' });
  });

  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds PATH, the safe base and the declared names only', async () => {
    const record = new FaultRecord(join(dir, 'envy.jsonl'));
    const connection = new McpConnection(
      { name: 'envy', transport: 'stdio', command: process.execPath, args: [FAULT_SERVER, 'slow', '--record', record.file], env: { API_KEY: 'k' } },
      { connectTimeoutMs: 20_000 },
    );
    try {
      await connection.connect();
      const started = await record.waitFor((e) => e.event === 'start');
      const base = ['HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'].filter((name) => process.env[name] !== undefined);
      expect(started.env).toEqual(['API_KEY', 'PATH', ...base].sort());
    } finally {
      await connection.close();
    }
  });
});
