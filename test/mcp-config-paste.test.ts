import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, type HttpAnswer } from './support/chat-clients.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

const ALICE = TEST_API_KEY; // acme:alice
const BOB = OTHER_API_KEY; // acme:bob

/** Values that must never come back from the API nor reach a log. */
const SECRETS = ['env-secret-paste-41c9', 'Bearer tok-paste-9e2d', 'ctx7-key-paste-77b1'];

type Refusal = { name: string; error_code: string; message: string; details?: Record<string, unknown> };

describe('pasting a Claude Desktop or Cursor MCP config', () => {
  let system: TestSystem;
  /** The stdio program the operator allows, on disk (the allowlist matches real paths): never run here. */
  let tools: string;
  const answers: string[] = [];

  const call = async (method: string, path: string, apiKey: string, body?: unknown): Promise<HttpAnswer> => {
    const answer = await api(system.url, method, path, { apiKey, body });
    answers.push(JSON.stringify(answer.body));
    return answer;
  };
  const paste = (body: unknown, user = 'alice', key = ALICE) => call('POST', `/users/${user}/mcp-servers`, key, body);
  const names = async (user = 'alice', key = ALICE) => (await call('GET', `/users/${user}/mcp-servers`, key)).body.servers.map((s: { name: string }) => s.name);
  const byName = (refused: Refusal[]) => Object.fromEntries(refused.map((r) => [r.name, r.error_code]));

  beforeAll(async () => {
    tools = mkdtempSync(join(tmpdir(), 'da-mcp-paste-'));
    mkdirSync(join(tools, 'bin'));
    writeFileSync(join(tools, 'bin/mcp-server-everything'), '#!/bin/sh\n');
    chmodSync(join(tools, 'bin/mcp-server-everything'), 0o755);
    system = await TestSystem.start({
      workers: 0,
      env: {
        DATAAGENT_API_KEYS: `${ALICE}:acme:alice,${BOB}:acme:bob`,
        DATAAGENT_MCP_MAX_SERVERS_PER_USER: '4',
        DATAAGENT_MCP_STDIO_ALLOW: 'mcp-server-everything env=API_KEY',
        PATH: `${tools}/bin:${process.env.PATH}`,
        DATAAGENT_OUTBOUND_ALLOWLIST: '127.0.0.1',
        DATAAGENT_LOG_LEVEL: 'debug',
      },
    });
  });

  afterAll(async () => {
    await system?.stop();
    if (tools) rmSync(tools, { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const [user, key] of [['alice', ALICE], ['bob', BOB]] as const) {
      for (const name of await names(user, key)) await call('DELETE', `/users/${user}/mcp-servers/${name}`, key);
    }
  });

  it('registers the allowed servers of a Claude Desktop config and says why each other one was refused', async () => {
    expect((await call('POST', '/users/alice/mcp-servers', ALICE, { name: 'github', url: 'http://127.0.0.1:9/mcp' })).status).toBe(201);
    const answer = await paste({
      globalShortcut: 'Ctrl+Space',
      mcpServers: {
        everything: { command: 'mcp-server-everything', args: ['stdio'], env: { API_KEY: SECRETS[0] } },
        warehouse: { url: 'http://127.0.0.1:9/sse', headers: { Authorization: SECRETS[1] } },
        shell: { command: 'bash', args: ['-c', 'id'] },
        github: { url: 'http://127.0.0.1:9/other' },
        files: { url: 'ftp://127.0.0.1/files' },
        metadata: { url: 'http://169.254.169.254/latest' },
        time: { command: 'mcp-server-everything', disabled: true },
      },
    });

    expect(answer.status).toBe(207);
    expect(answer.body.message).toMatch(/^2 of 7 MCP servers added; refused: shell \(mcp_server_not_allowed\)/);
    expect(answer.body.added).toEqual([
      expect.objectContaining({ name: 'everything', transport: 'stdio', command: 'mcp-server-everything', args: ['stdio'], env: { API_KEY: '***' }, status: 'unknown' }),
      expect.objectContaining({ name: 'warehouse', transport: 'sse', url: 'http://127.0.0.1:9/sse', headers: { Authorization: '***' } }),
    ]);
    expect(byName(answer.body.refused)).toEqual({ shell: 'mcp_server_not_allowed', github: 'mcp_server_exists', files: 'validation_failed', metadata: 'validation_failed', time: 'mcp_server_disabled' });
    const refused = Object.fromEntries((answer.body.refused as Refusal[]).map((r) => [r.name, r]));
    expect(refused.shell!.message).toContain('"bash" is not on the operator\'s allowlist (DATAAGENT_MCP_STDIO_ALLOW)');
    expect(refused.github!.message).toContain('exists already');
    expect(refused.files!.details).toEqual({ fields: { url: ['must be an absolute http:// or https:// URL'] } });
    expect(refused.metadata!.details).toEqual({ fields: { url: [expect.stringContaining('not allowlisted')] } });
    expect(await names()).toEqual(['everything', 'github', 'warehouse']);
  });

  it("registers a Cursor map pasted without mcpServers, with Cursor's type spellings; pasting it again adds nothing (409 with each reason)", async () => {
    const cursor = {
      linear: { type: 'sse', url: 'http://127.0.0.1:9/sse' },
      context7: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { CONTEXT7_API_KEY: SECRETS[2] } },
      browser: { type: 'streamable-http', url: 'http://127.0.0.1:9/browser' },
    };
    const first = await paste(cursor);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ message: '3 MCP servers added', added: expect.any(Array), refused: [] });
    expect(first.body.added.map((s: { name: string; transport: string }) => [s.name, s.transport])).toEqual([
      ['linear', 'sse'],
      ['context7', 'streamable-http'],
      ['browser', 'streamable-http'],
    ]);
    expect(await names()).toEqual(['browser', 'context7', 'linear']);

    const again = await paste(cursor);
    expect(again).toMatchObject({ status: 409, body: { error_code: 'mcp_servers_refused', details: { added: [] } } });
    expect(byName(again.body.details.refused)).toEqual({ linear: 'mcp_server_exists', context7: 'mcp_server_exists', browser: 'mcp_server_exists' });
  });

  it('cannot do more than single POSTs: no command off the allowlist, no env it does not allow, no folder, no server past the limit', async () => {
    const sneaky = await paste({
      mcpServers: {
        shell: { type: 'stdio', command: '/bin/sh', args: ['-c', 'id'] },
        preload: { command: 'mcp-server-everything', env: { NODE_OPTIONS: '--require /tmp/x.js' } },
        elsewhere: { command: 'mcp-server-everything', cwd: '/etc' },
      },
    });
    expect(sneaky).toMatchObject({ status: 403, body: { error_code: 'mcp_servers_refused', message: expect.stringContaining('No MCP server of the config was added') } });
    expect(sneaky.body.details.refused).toEqual([
      { name: 'shell', error_code: 'mcp_server_not_allowed', message: expect.any(String), details: { field: 'command' } },
      { name: 'preload', error_code: 'mcp_server_not_allowed', message: expect.any(String), details: { field: 'env.NODE_OPTIONS' } },
      { name: 'elsewhere', error_code: 'mcp_server_not_allowed', message: expect.any(String), details: { field: 'cwd' } },
    ]);
    expect(await names()).toEqual([]);

    const five = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((n) => [n, { url: `http://127.0.0.1:9/${n}` }]));
    const limited = await paste(five);
    expect(limited.status).toBe(207);
    expect(limited.body.added).toHaveLength(4);
    expect(limited.body.refused).toEqual([{ name: 'e', error_code: 'mcp_server_limit', message: expect.any(String), details: { limit: 'mcp_servers_per_user', max: 4 } }]);
    const over = await paste({ f: { url: 'http://127.0.0.1:9/f' } });
    expect(over).toMatchObject({ status: 429, body: { error_code: 'mcp_servers_refused' } });
    expect(over.headers.get('retry-after')).toBe('60');
  });

  it("answers 404 for another user's id, and 422 showing the accepted shapes for any other body; a single server still answers as before", async () => {
    expect(await paste({ mcpServers: { x: { url: 'http://127.0.0.1:9/x' } } }, 'bob', ALICE)).toMatchObject({ status: 404 });
    expect(await names('bob', BOB)).toEqual([]);

    for (const body of [{}, { servers: [{ name: 'a', url: 'http://127.0.0.1:9/a' }] }, { mcpServers: [] }, { mcpServers: {} }]) {
      const answer = await paste(body);
      expect(answer).toMatchObject({ status: 422, body: { error_code: 'invalid_mcp_config', details: { accepted_shapes: expect.arrayContaining([expect.stringContaining('"mcpServers"')]) } } });
    }
    const single = await paste({ name: 'one', url: 'http://127.0.0.1:9/one' });
    expect(single).toMatchObject({ status: 201, body: { name: 'one', transport: 'streamable-http' } });
    expect(await paste({ name: 'one', url: 'http://127.0.0.1:9/one' })).toMatchObject({ status: 409, body: { error_code: 'mcp_server_exists' } });
  });

  it('never returns or logs a secret value', () => {
    const all = answers.join('\n');
    const logs = system.gateway.output.join('\n');
    expect(logs).toContain('mcp-servers'); // the request log is there to look at
    for (const secret of SECRETS) {
      expect(all).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });
});
