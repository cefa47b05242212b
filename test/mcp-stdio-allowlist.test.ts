import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api } from './support/chat-clients.js';
import { FAULT_SERVER } from './support/mcp-fault-servers.js';
import { TestSystem } from './support/system.js';

const ALICE = 'stdio-acme-alice';
const GINA = 'stdio-globex-gina';

/**
 * The stdio allowlist against a red team's registrations, over the real gateway in multi-tenant
 * mode: each way around it that worked on a string-matched list (`..` through a folder entry, a
 * link out of the folder, `npx -c`, `node -e`, a shell, an interpreter behind a link, variables
 * that make an allowed program run something else) gets 403 with the reason; launchers whose
 * whole command line the operator pinned are accepted. Registration only: no worker runs them
 * (test/mcp-stdio-environment.test.ts shows what a started server's environment holds).
 */
describe('stdio allowlist over REST', () => {
  let system: TestSystem;
  let dir: string;
  /** The operator's allowed folder; programs in it are never run, only looked at. */
  let folder: string;

  const register = (key: string, user: string, body: Record<string, unknown>) => api(system.url, 'POST', `/users/${user}/mcp-servers`, { apiKey: key, body });
  const pinnedNode = [FAULT_SERVER, 'slow'];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-stdio-allow-e2e-'));
    folder = join(dir, 'mcp');
    for (const sub of ['mcp', 'bin', 'outside']) mkdirSync(join(dir, sub));
    for (const file of ['mcp/weather', 'mcp/python3.11', 'bin/mcp-files', 'outside/tool']) {
      writeFileSync(join(dir, file), '#!/bin/sh\nexit 0\n');
      chmodSync(join(dir, file), 0o755);
    }
    symlinkSync('/bin/sh', join(folder, 'escape'));
    symlinkSync('python3.11', join(folder, 'helper'));
    system = await TestSystem.start({
      workers: 0,
      env: {
        DATAAGENT_MULTI_TENANT: 'true',
        DATAAGENT_API_KEYS: `${ALICE}:acme:alice,${GINA}:globex:gina`,
        // Strings as in the comma-separated form, and an object for a command line with paths.
        DATAAGENT_MCP_STDIO_ALLOW: JSON.stringify([
          `${folder}/*`,
          `${dir}/bin/mcp-files env=API_KEY`,
          'npx -y @modelcontextprotocol/server-everything',
          { command: process.execPath, args: pinnedNode, env: ['API_KEY'] },
        ]),
      },
    });
  });

  afterAll(async () => {
    await system?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses every way around the list with a 403 that names the field and says why', async () => {
    const upToRoot = '../'.repeat(folder.split('/').length - 1);
    const notListed = /is not on the operator's allowlist \(DATAAGENT_MCP_STDIO_ALLOW\)/;
    const launcher = /runs whatever its arguments say \(\S+ is a launcher or interpreter\)/;
    const bypasses: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['.. through the folder entry', { command: `${folder}/${upToRoot}bin/sh`, args: ['-c', 'id'] }, 'command', notListed],
      ['a link out of the folder', { command: join(folder, 'escape'), args: ['-c', 'id'] }, 'command', notListed],
      ['npx -c', { command: 'npx', args: ['-c', 'sh -c id'] }, 'args', launcher],
      ['npx with more than the pinned arguments', { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything', '-c', 'id'] }, 'args', launcher],
      ['node -e', { command: process.execPath, args: ['-e', 'require("child_process").execSync("id")'] }, 'args', launcher],
      ['bash -c', { command: 'bash', args: ['-c', 'id'] }, 'command', notListed],
      ['sh', { command: 'sh' }, 'command', notListed],
      ['an interpreter in the folder', { command: join(folder, 'python3.11'), args: ['-c', 'import os'] }, 'command', launcher],
      ['python behind a link in the folder', { command: join(folder, 'helper'), args: ['-c', 'import os'] }, 'command', launcher],
      ['a relative command', { command: './mcp-files' }, 'command', /is a relative path/],
    ];
    for (const [label, body, field, reason] of bypasses) {
      const answer = await register(ALICE, 'alice', { name: 'bypass', ...body });
      expect({ label, status: answer.status, error: answer.body.error_code, field: answer.body.details?.field }).toEqual({ label, status: 403, error: 'mcp_server_not_allowed', field });
      expect(answer.body.message).toMatch(reason);
    }

    const names = ['PYTHONWARNINGS', 'BROWSER', 'BASH_FUNC_x%%', 'GIT_SSH_COMMAND', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0', 'PYTHONUSERBASE', 'JDK_JAVA_OPTIONS', 'GCONV_PATH', 'PERLLIB', 'PATH', 'HOME', 'LD_PRELOAD', 'NODE_OPTIONS'];
    for (const name of names) {
      const answer = await register(GINA, 'gina', { name: 'files', command: join(dir, 'bin', 'mcp-files'), env: { API_KEY: 'k', [name]: 'x' } });
      expect({ name, status: answer.status, field: answer.body.details?.field }).toEqual({ name, status: 403, field: `env.${name}` });
      expect(answer.body.message).toBe(`env.${name} is not passed to "${join(dir, 'bin', 'mcp-files')}": the operator lets users set only API_KEY for it (DATAAGENT_MCP_STDIO_ALLOW)`);
    }
    expect((await api(system.url, 'GET', '/users/alice/mcp-servers', { apiKey: ALICE })).body.servers).toEqual([]);
    expect((await api(system.url, 'GET', '/users/gina/mcp-servers', { apiKey: GINA })).body.servers).toEqual([]);
  });

  it('accepts the command lines the operator pinned, and what the folder and env lists allow', async () => {
    const npx = await register(GINA, 'gina', { name: 'everything', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] });
    expect(npx).toMatchObject({ status: 201, body: { name: 'everything', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] } });
    expect((await register(ALICE, 'alice', { name: 'faulty', command: process.execPath, args: pinnedNode, env: { API_KEY: 'k' } })).status).toBe(201);
    expect((await register(GINA, 'gina', { name: 'files', command: join(dir, 'bin', 'mcp-files'), args: ['--any', 'thing'], env: { API_KEY: 'k' } })).status).toBe(201);
    expect((await register(GINA, 'gina', { name: 'weather', command: join(folder, 'weather'), args: ['--city', 'Bern'] })).status).toBe(201);
  });
});
