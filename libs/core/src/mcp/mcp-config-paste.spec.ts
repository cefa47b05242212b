import { MAX_PASTED_SERVERS, readMcpPaste } from './mcp-config-paste.js';
import { parseMcpServer } from './mcp-config.js';

/** Claude Desktop's claude_desktop_config.json, with the settings it keeps beside the servers. */
const CLAUDE_DESKTOP = {
  globalShortcut: 'Ctrl+Space',
  mcpServers: {
    filesystem: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/Users/me/Desktop'] },
    github: { command: 'docker', args: ['run', '-i', '--rm', 'ghcr.io/github/github-mcp-server'], env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_x' } },
    old: { command: 'uvx', args: ['mcp-server-time'], disabled: true },
  },
};

/** Cursor's mcp.json servers, pasted without the mcpServers wrapper. */
const CURSOR_MAP = {
  linear: { type: 'sse', url: 'https://mcp.linear.app/sse' },
  context7: { type: 'http', url: 'https://mcp.context7.com/mcp', headers: { CONTEXT7_API_KEY: 'k' } },
  browser: { type: 'streamable-http', url: 'https://browser.example/mcp', name: 'ignored' },
  git: { type: 'stdio', command: 'mcp-server-git', args: ['--repository', '.'], envFile: '.env' },
};

describe('reading a pasted MCP client config', () => {
  it('leaves a single server body, and anything not an object, to the single-server path', () => {
    for (const body of [{ name: 'github', url: 'https://x.example/mcp' }, { name: '', transport: 'carrier-pigeon' }, { command: 'x' }, { url: 'https://x.example/' }, { type: 'http' }, [{ name: 'a' }], null, 'text']) {
      expect(readMcpPaste(body)).toEqual({ shape: 'server' });
    }
  });

  it("reads Claude Desktop's mcpServers: each key a server's name, disabled ones skipped, other settings ignored", () => {
    const reading = readMcpPaste(CLAUDE_DESKTOP);
    expect(reading).toEqual({
      shape: 'mcpServers',
      entries: [
        { name: 'filesystem', body: { name: 'filesystem', ...CLAUDE_DESKTOP.mcpServers.filesystem } },
        { name: 'github', body: { name: 'github', ...CLAUDE_DESKTOP.mcpServers.github } },
        { name: 'old', skipped: expect.stringContaining('disabled') },
      ],
    });
  });

  it("reads Cursor's bare map, its type spellings and the key as the name, into bodies parseMcpServer takes as one POST", () => {
    const reading = readMcpPaste(CURSOR_MAP);
    if (reading.shape !== 'map') throw new Error(`read as ${reading.shape}`);
    const servers = reading.entries.map((e) => ('body' in e ? parseMcpServer(e.body).server : undefined));
    expect(servers).toEqual([
      { name: 'linear', transport: 'sse', url: 'https://mcp.linear.app/sse' },
      { name: 'context7', transport: 'streamable-http', url: 'https://mcp.context7.com/mcp', headers: { CONTEXT7_API_KEY: 'k' } },
      { name: 'browser', transport: 'streamable-http', url: 'https://browser.example/mcp' },
      { name: 'git', transport: 'stdio', command: 'mcp-server-git', args: ['--repository', '.'] },
    ]);
  });

  it('hands a bad entry on unchanged, so it is refused with the reason a single POST would get', () => {
    const reading = readMcpPaste({ mcpServers: { 'has space': { url: 'https://x.example/mcp' }, empty: {}, text: 'npx server', ftp: { url: 'ftp://x.example/' } } });
    if (reading.shape !== 'mcpServers') throw new Error(`read as ${reading.shape}`);
    const fields = reading.entries.map((e) => ('body' in e ? parseMcpServer(e.body).errors.map((f) => f.field) : []));
    expect(fields).toEqual([['name'], ['transport'], ['body'], ['url']]);
  });

  it('refuses other shapes, showing the accepted ones', () => {
    for (const body of [{}, { mcpServers: [] }, { mcpServers: {} }, { servers: [{ name: 'a', command: 'x' }] }, { a: { url: 'https://x.example/' }, b: 'x' }]) {
      const reading = readMcpPaste(body);
      expect(reading).toEqual({ shape: 'unknown', message: expect.stringContaining('{"mcpServers": {') });
    }
    const many = Object.fromEntries(Array.from({ length: MAX_PASTED_SERVERS + 1 }, (_, i) => [`s${i}`, { url: 'https://x.example/' }]));
    expect(readMcpPaste({ mcpServers: many })).toEqual({ shape: 'unknown', message: expect.stringContaining(`at most ${MAX_PASTED_SERVERS}`) });
  });
});
