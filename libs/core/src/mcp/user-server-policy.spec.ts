import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Resolver } from '../tools/builtin/net/outbound-guard.js';
import { parseStdioAllowlist } from './stdio-allowlist.js';
import { checkMcpServerUrl, checkUserMcpServer, type UserServerPolicy } from './user-server-policy.js';

/** DNS answers from a table: no lookup, and nothing is ever connected to. */
function fakeResolver(answers: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolver = async (hostname: string) => {
    asked.push(hostname);
    const found = answers[hostname];
    if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return found;
  };
  return Object.assign(resolver, { asked });
}

const dns = fakeResolver({
  'mcp.example.com': ['93.184.216.34'],
  'intranet.corp': ['10.1.2.3'],
  'metadata.cloud': ['169.254.169.254'],
  'sneaky.example': ['93.184.216.34', '192.168.1.10'],
  'v6.example': ['2606:4700:4700::1111'],
  'v6-internal.example': ['fd12:3456::1'],
  'mcp.internal': ['10.9.9.9'],
  localhost: ['127.0.0.1', '::1'],
});
const policy = (allowlist: string[] = []): UserServerPolicy => ({ stdioAllow: [], outbound: { allowlist, resolver: dns } });

/** Programs on disk for the stdio checks: mcp-files on the PATH, a folder with a server, a shell beside it. */
const tools = (() => {
  const root = mkdtempSync(join(tmpdir(), 'da-user-policy-'));
  const bin = join(root, 'bin');
  const folder = join(root, 'mcp');
  for (const dir of [bin, folder]) mkdirSync(dir);
  for (const file of [join(bin, 'mcp-files'), join(folder, 'weather'), join(root, 'sh')]) {
    writeFileSync(file, '#!/bin/sh\n');
    chmodSync(file, 0o755);
  }
  return { root, bin, folder, sh: join(root, 'sh') };
})();
afterAll(() => rmSync(tools.root, { recursive: true, force: true }));
const stdioPolicy = (allow: string): UserServerPolicy => ({ ...policy(), stdioAllow: parseStdioAllowlist(allow), host: { PATH: tools.bin } });

describe('checkMcpServerUrl', () => {
  it.each([
    'http://127.0.0.1:9000/mcp',
    'http://localhost/mcp',
    'http://[::1]:8080/mcp',
    'http://2130706433/mcp',
    'http://0x7f.1/mcp',
    'http://10.0.0.5/mcp',
    'http://192.168.1.1/sse',
    'http://169.254.169.254/latest/meta-data',
    'http://[::ffff:127.0.0.1]/mcp',
    'http://[fe80::1]/mcp',
    'https://intranet.corp/mcp',
    'https://metadata.cloud/mcp',
    'https://sneaky.example/mcp',
    'https://v6-internal.example/mcp',
  ])('refuses %s, naming the url field', async (url) => {
    const error = await checkMcpServerUrl(url, policy().outbound);
    expect(error).toEqual({ field: 'url', message: expect.stringMatching(/private, loopback or otherwise internal address.*DATAAGENT_OUTBOUND_ALLOWLIST/) });
  });

  it.each(['https://mcp.example.com/mcp', 'http://93.184.216.34:8080/sse', 'https://v6.example/mcp'])('lets the public %s through', async (url) => {
    expect(await checkMcpServerUrl(url, policy().outbound)).toBeNull();
  });

  it('opens exactly what the allowlist names', async () => {
    expect(await checkMcpServerUrl('http://127.0.0.1:9000/mcp', policy(['127.0.0.1']).outbound)).toBeNull();
    expect(await checkMcpServerUrl('http://127.0.0.1:9001/mcp', policy(['127.0.0.1:9000']).outbound)).not.toBeNull();
    expect(await checkMcpServerUrl('https://mcp.internal/mcp', policy(['mcp.internal']).outbound)).toBeNull();
    expect(await checkMcpServerUrl('https://intranet.corp/mcp', policy(['10.0.0.0/8']).outbound)).toBeNull();
    expect(await checkMcpServerUrl('https://metadata.cloud/mcp', policy(['10.0.0.0/8']).outbound)).not.toBeNull();
  });

  it('refuses a host that does not resolve, without the allowlist hint', async () => {
    const error = await checkMcpServerUrl('https://nowhere.invalid/mcp', policy().outbound);
    expect(error).toEqual({ field: 'url', message: expect.stringContaining('cannot resolve nowhere.invalid') });
    expect(error!.message).not.toContain('ALLOWLIST');
    expect(dns.asked).toContain('nowhere.invalid');
  });
});

describe('checkUserMcpServer', () => {
  it('accepts a public remote server', async () => {
    const check = await checkUserMcpServer({ name: 'github', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'x' } }, policy());
    expect(check).toEqual({ ok: true, server: { name: 'github', transport: 'streamable-http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'x' } } });
  });

  it('names every bad field in one 422', async () => {
    const check = await checkUserMcpServer({ name: 'bad name', transport: 'stdio', timeout_ms: 5 }, policy());
    expect(check).toEqual({ ok: false, status: 422, errors: expect.arrayContaining([
      expect.objectContaining({ field: 'name' }),
      expect.objectContaining({ field: 'command' }),
      expect.objectContaining({ field: 'timeout_ms' }),
    ]) });
    expect(await checkUserMcpServer({ name: 'ftp', url: 'ftp://files.example/' }, policy())).toEqual({ ok: false, status: 422, errors: [expect.objectContaining({ field: 'url', message: expect.stringContaining('http') })] });
  });

  it('refuses a private URL with a 422 on url, unless allowlisted', async () => {
    expect(await checkUserMcpServer({ name: 'local', url: 'http://127.0.0.1:3000/mcp' }, policy())).toEqual({ ok: false, status: 422, errors: [expect.objectContaining({ field: 'url' })] });
    expect(await checkUserMcpServer({ name: 'local', url: 'http://127.0.0.1:3000/mcp' }, policy(['127.0.0.1']))).toMatchObject({ ok: true });
  });

  it('takes the name from the path, and refuses a body naming another', async () => {
    expect(await checkUserMcpServer({ url: 'https://mcp.example.com/mcp' }, policy(), 'github')).toMatchObject({ ok: true, server: { name: 'github' } });
    expect(await checkUserMcpServer({ name: 'github', url: 'https://mcp.example.com/mcp' }, policy(), 'github')).toMatchObject({ ok: true });
    expect(await checkUserMcpServer({ name: 'gitlab', url: 'https://mcp.example.com/mcp' }, policy(), 'github')).toEqual({
      ok: false, status: 422, errors: [{ field: 'name', message: expect.stringContaining('"github", the name in the path') }],
    });
  });

  it('refuses a stdio command the operator did not allowlist with a 403 that says why', async () => {
    const none = await checkUserMcpServer({ name: 'files', command: 'mcp-files' }, policy());
    expect(none).toEqual({ ok: false, status: 403, field: 'command', reason: expect.stringContaining('DATAAGENT_MCP_STDIO_ALLOW is empty') });
    const allow = stdioPolicy(`mcp-files env=TOKEN,${tools.folder}/*`);
    const other = await checkUserMcpServer({ name: 'shell', command: tools.sh, args: ['-c', 'id'] }, allow);
    expect(other).toEqual({ ok: false, status: 403, field: 'command', reason: expect.stringContaining(`"${tools.sh}" is not on the operator's allowlist`) });
    expect(await checkUserMcpServer({ name: 'files', command: 'mcp-files', env: { TOKEN: 't' } }, allow)).toMatchObject({ ok: true });
    expect(await checkUserMcpServer({ name: 'weather', command: `${tools.folder}/weather` }, allow)).toMatchObject({ ok: true });
    expect(await checkUserMcpServer({ name: 'weather', command: `${tools.folder}/../sh` }, allow)).toMatchObject({ ok: false, status: 403, field: 'command' });
    expect(await checkUserMcpServer({ name: 'ghost', command: 'mcp-nowhere' }, allow)).toEqual({ ok: false, status: 403, field: 'command', reason: expect.stringContaining('"mcp-nowhere" is not found on the workers\' PATH') });
  });

  it('refuses an allowlisted command with a folder, or with an environment variable the operator did not list for it', async () => {
    const allow = stdioPolicy('mcp-files env=GITHUB_TOKEN');
    expect(await checkUserMcpServer({ name: 'x', command: 'mcp-files', cwd: '/tmp' }, allow)).toMatchObject({ ok: false, status: 403, field: 'cwd' });
    for (const name of ['PATH', 'HOME', 'LD_PRELOAD', 'NODE_OPTIONS', 'PYTHONWARNINGS', 'BASH_FUNC_x%%', 'GIT_SSH_COMMAND', 'MY_PATH']) {
      expect(await checkUserMcpServer({ name: 'x', command: 'mcp-files', env: { [name]: '/home/me' } }, allow)).toMatchObject({ ok: false, status: 403, field: `env.${name}` });
    }
    expect(await checkUserMcpServer({ name: 'x', command: 'mcp-files', env: { GITHUB_TOKEN: 't' } }, allow)).toMatchObject({ ok: true });
  });
});
