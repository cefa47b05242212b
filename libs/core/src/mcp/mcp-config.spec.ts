import { maskSecrets, parseMcpConfigFile, parseMcpServer, takesPersonalSignIn } from './mcp-config.js';

describe('MCP server configuration', () => {
  it("reads the `servers` list and the mcpServers map of other MCP clients alike", () => {
    const seed = parseMcpConfigFile(JSON.stringify({ servers: [{ name: 'files', command: 'npx', args: ['-y', 'server-files'], env: { ROOT: '/data' }, disabled: true, trigger_keywords: ['file'] }] }));
    const claude = parseMcpConfigFile(JSON.stringify({ mcpServers: { files: { command: 'npx', args: ['-y', 'server-files'], env: { ROOT: '/data' }, disabled: true, triggerKeywords: ['file'] } } }));
    const expected = [{ name: 'files', transport: 'stdio', command: 'npx', args: ['-y', 'server-files'], env: { ROOT: '/data' }, disabled: true, triggerKeywords: ['file'] }];
    expect(seed).toEqual({ servers: expected, errors: [] });
    expect(claude).toEqual({ servers: expected, errors: [] });
  });

  it('infers the transport from a command or a URL, and takes the spellings other clients use', () => {
    const servers = parseMcpConfigFile(
      JSON.stringify({ mcpServers: { a: { url: 'https://x.example/sse' }, b: { url: 'https://x.example/mcp' }, c: { type: 'http', url: 'https://x.example/' }, d: { transport: 'streamableHttp', url: 'http://x.example/' } } }),
    ).servers;
    expect(servers.map((s) => [s.name, s.transport])).toEqual([
      ['a', 'sse'],
      ['b', 'streamable-http'],
      ['c', 'streamable-http'],
      ['d', 'streamable-http'],
    ]);
  });

  it('names each bad field', () => {
    const fields = (raw: unknown) => parseMcpServer(raw).errors.map((e) => e.field);
    expect(fields({ name: 'has.dot', command: 'x' })).toEqual(['name']);
    expect(fields({ name: 'a__b', command: 'x' })).toEqual(['name']);
    expect(fields({ name: 'ok', transport: 'stdio' })).toEqual(['command']);
    expect(fields({ name: 'ok', url: 'ftp://x.example/' })).toEqual(['url']);
    expect(fields({ name: 'ok', transport: 'carrier-pigeon', url: 'https://x.example/' })).toEqual(['transport']);
    expect(fields({ name: 'ok', command: 'x', env: { A: 1 }, timeout_ms: 5, trigger_keywords: [''] })).toEqual(['env.A', 'timeout_ms', 'trigger_keywords']);
    expect(fields({ name: 'ok' })).toEqual(['transport']);
    expect(parseMcpConfigFile('{"servers": [{"name": "ok", "command": "x"}, {"name": "ok", "command": "y"}, {"command": 3}]}').errors.map((e) => e.field)).toEqual([
      'servers[1].name',
      'servers[2].name',
      'servers[2].command',
    ]);
    expect(parseMcpConfigFile('not json').errors[0]!.field).toBe('(file)');
    expect(parseMcpConfigFile('{"tools": []}').errors[0]!.message).toContain('mcpServers');
  });

  it('reads per-tool timeouts, idempotence and approval, naming each bad setting', () => {
    const { server, errors } = parseMcpServer({ name: 'shop', url: 'https://shop.example/mcp', timeout_ms: 5_000, tools: { get_order: { timeout_ms: 1_000, idempotent: true }, cancel_order: { approval: true }, ping: { approval: false } } });
    expect(errors).toEqual([]);
    expect(server!.tools).toEqual({ get_order: { timeoutMs: 1_000, idempotent: true }, cancel_order: { approval: true }, ping: { approval: false } });
    const fields = (tools: unknown) => parseMcpServer({ name: 'shop', url: 'https://shop.example/mcp', tools }).errors.map((e) => e.field);
    expect(fields([])).toEqual(['tools']);
    expect(fields({ a: { timeout_ms: 1, idempotent: 'yes', retries: 3 }, b: 'x' })).toEqual(['tools.a.retries', 'tools.a.timeout_ms', 'tools.a.idempotent', 'tools.b']);
  });

  it('masks secret values', () => {
    expect(maskSecrets({ name: 'a', transport: 'streamable-http', url: 'https://x.example/', headers: { Authorization: 'Bearer s3cret' } }).headers).toEqual({ Authorization: '***' });
  });
});

describe('takesPersonalSignIn', () => {
  it("is true for a remote server with no static Authorization header, signed in to as no one else", () => {
    expect(takesPersonalSignIn({ name: 'a', transport: 'streamable-http', url: 'https://x.test/mcp' })).toBe(true);
    expect(takesPersonalSignIn({ name: 'a', transport: 'sse', url: 'https://x.test/sse', headers: { 'X-Org': 'acme' } })).toBe(true);
    expect(takesPersonalSignIn({ name: 'a', transport: 'streamable-http', url: 'https://x.test/mcp', headers: { authorization: 'Bearer k' } })).toBe(false);
    expect(takesPersonalSignIn({ name: 'a', transport: 'streamable-http', url: 'https://x.test/mcp', oauth: { grant: 'client_credentials', clientId: 'c', clientSecret: 's' } })).toBe(false);
    expect(takesPersonalSignIn({ name: 'a', transport: 'stdio', command: 'x' })).toBe(false);
  });
});
