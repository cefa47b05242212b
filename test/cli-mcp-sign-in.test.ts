import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigs } from '#core/config/env.js';
import { McpRuntimeConfig } from '#core/config/mcp-settings.js';
import { openLocalMcp, type LocalMcp } from '../apps/cli/src/agent/local-mcp.js';
import { OAuthMcpServer } from './support/oauth-mcp-server.js';

/**
 * The local CLI signs its person in to an OAuth MCP server with a loopback redirect: the server
 * needs sign-in at start, `/mcp sign-in` prints the URL (and opens a browser where there is one),
 * the browser comes back to 127.0.0.1, and the server connects; the sign-in is kept for the next start.
 */
describe('local CLI: MCP sign-in with a loopback redirect', () => {
  let oauth: OAuthMcpServer;
  let dir: string;
  const opened: LocalMcp[] = [];

  beforeAll(async () => {
    oauth = await new OAuthMcpServer(120).start();
    dir = mkdtempSync(join(tmpdir(), 'da-cli-oauth-'));
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { tracker: { url: `${oauth.url}/mcp` } } }));
  });
  afterAll(async () => {
    for (const mcp of opened) await mcp.close();
    await oauth?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const open = async (warnings: string[]) => {
    const { mcp: config } = loadConfigs({ mcp: McpRuntimeConfig }, {}, []);
    const mcp = await openLocalMcp(join(dir, 'mcp.json'), { config, outboundAllowlist: [`127.0.0.1:${oauth.port}`], textTools: false, warn: (line) => warnings.push(line) });
    opened.push(mcp);
    await mcp.connect();
    return mcp;
  };

  /** A browser: follows the redirects from the authorization URL to the CLI's loopback callback. */
  const browser = async (url: string) => {
    for (let at = url; ; ) {
      const res = await fetch(at, { redirect: 'manual' });
      const location = res.headers.get('location');
      if (!location) return;
      at = new URL(location, at).toString();
    }
  };

  it('asks for sign-in, signs in through the browser, connects, and keeps the sign-in for the next start', async () => {
    const warnings: string[] = [];
    const mcp = await open(warnings);
    expect(warnings).toEqual(['MCP server tracker needs you to sign in: type /mcp sign-in tracker']);
    expect(mcp.status()).toEqual([{ name: 'tracker', status: 'failed', reason: expect.stringContaining('needs sign-in') }]);

    const printed: string[] = [];
    const state = await mcp.signIn('tracker', (line) => printed.push(line), browser);
    expect(printed).toEqual([expect.stringMatching(/^Sign in to tracker in your browser: http:\/\/127\.0\.0\.1:\d+\/authorize\?/)]);
    expect(oauth.authorizations.at(-1)).toMatchObject({ redirect_uri: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/callback$/), code_challenge_method: 'S256' });
    expect(state).toEqual({ name: 'tracker', status: 'connected', tools: 1 });
    // The person's own file, readable by them alone.
    expect(statSync(join(dir, 'mcp-oauth.json')).mode & 0o777).toBe(0o600);

    const again: string[] = [];
    const next = await open(again);
    expect(again).toEqual([]);
    expect(next.status()).toEqual([{ name: 'tracker', status: 'connected', tools: 1 }]);
  });

  it('refuses an unknown server by name', async () => {
    const mcp = await open([]);
    await expect(mcp.signIn('nothing', () => undefined, browser)).rejects.toThrow('no MCP server named nothing');
  });
});
