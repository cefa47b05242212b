import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpConfig } from './user-server-config.js';
import { loadConfig } from '../config/env.js';
import type { McpServerConfig } from './mcp-config.js';
import { matchStdioServer, parseStdioAllowlist, resolveStdioCommand } from './stdio-allowlist.js';
import { isLauncherName } from './stdio-launchers.js';

/**
 * A small file system of its own: programs in bin/ (npx linked to its package's script, as npm
 * installs it), an allowed folder opt/mcp/ with a server, an interpreter and links, and programs
 * outside it. Nothing is run: the allowlist only looks.
 */
let root: string;
let bin: string;
let mcp: string;
let path: string;

function program(file: string): string {
  writeFileSync(file, '#!/bin/sh\nexit 0\n');
  chmodSync(file, 0o755);
  return file;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'da-stdio-allow-'));
  bin = join(root, 'bin');
  mcp = join(root, 'opt', 'mcp');
  for (const dir of [bin, mcp, join(root, 'opt', 'mcp-evil'), join(root, 'lib', 'npm', 'bin'), join(root, 'outside')]) mkdirSync(dir, { recursive: true });
  program(join(bin, 'mcp-files'));
  program(join(bin, 'node'));
  program(join(bin, 'bash'));
  program(join(bin, 'dash'));
  symlinkSync('dash', join(bin, 'sh'));
  program(join(root, 'lib', 'npm', 'bin', 'npx-cli.js'));
  symlinkSync('../lib/npm/bin/npx-cli.js', join(bin, 'npx'));
  program(join(root, 'outside', 'tool'));
  program(join(root, 'outside', 'python3.11'));
  program(join(mcp, 'weather'));
  program(join(mcp, 'bash'));
  program(join(mcp, 'python3.11'));
  symlinkSync('python3.11', join(mcp, 'helper'));
  symlinkSync(join(root, 'outside', 'python3.11'), join(mcp, 'py'));
  symlinkSync(join(root, 'outside', 'tool'), join(mcp, 'escape'));
  symlinkSync('bash', join(mcp, 'shell'));
  symlinkSync(join(bin, 'sh'), join(mcp, 'sh-out'));
  program(join(root, 'opt', 'mcp-evil', 'tool'));
  symlinkSync(mcp, join(root, 'mcp-link'));
  writeFileSync(join(bin, 'not-executable'), 'data');
  // A relative folder first: the lookup must not depend on the folder the worker runs in.
  path = `.:${bin}`;
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

const server = (command: string, args?: string[], env?: Record<string, string>): Pick<McpServerConfig, 'command' | 'args' | 'env'> => ({ command, ...(args ? { args } : {}), ...(env ? { env } : {}) });
const match = (allow: string, s: Pick<McpServerConfig, 'command' | 'args' | 'env'>) => matchStdioServer(s, parseStdioAllowlist(allow), path);

describe('parseStdioAllowlist', () => {
  it('reads commands, folders, pinned arguments and env names from a comma-separated list', () => {
    expect(parseStdioAllowlist(' mcp-files , /opt/mcp/* ,npx -y @modelcontextprotocol/server-everything env=API_KEY:OTHER env=THIRD, ')).toEqual([
      { command: 'mcp-files', folder: false, env: [], text: 'mcp-files' },
      { command: '/opt/mcp', folder: true, env: [], text: '/opt/mcp/*' },
      { command: 'npx', folder: false, args: ['-y', '@modelcontextprotocol/server-everything'], env: ['API_KEY', 'OTHER', 'THIRD'], text: 'npx -y @modelcontextprotocol/server-everything env=API_KEY:OTHER env=THIRD' },
    ]);
    expect(parseStdioAllowlist('')).toEqual([]);
  });

  it('reads the JSON form, where arguments may hold spaces and commas and [] pins no argument', () => {
    const entries = parseStdioAllowlist('[{"command": "node", "args": ["/srv/my server.js", "a,b"], "env": ["TOKEN"]}, {"command": "/usr/bin/python3", "args": []}, "mcp-files env=KEY"]');
    expect(entries).toMatchObject([
      { command: 'node', folder: false, args: ['/srv/my server.js', 'a,b'], env: ['TOKEN'] },
      { command: '/usr/bin/python3', folder: false, args: [], env: [] },
      { command: 'mcp-files', env: ['KEY'] },
    ]);
  });

  it.each([
    ['npx', /"npx" runs whatever its arguments say .* pinned/],
    ['mcp-files,/usr/bin/python3.11', /python3\.11/],
    ['bash', /launcher or interpreter/],
    ['[{"command": "uvx"}]', /"uvx"/],
    ['bin/server', /not the relative bin\/server/],
    ['/opt/mcp/mcp-*', /only a whole folder may end in "\*"/],
    ['/opt/mcp/* --flag', /a folder entry takes no arguments/],
    ['mcp-files env=PATH', /PATH is set for every server/],
    ['mcp-files env=HOME', /HOME is set for every server/],
    ['mcp-files env=BASH_FUNC_x%%', /env names letters, digits and "_"/],
    ['mcp-files env=A --flag', /env=A must come last/],
    ['[1]', /entry 0 must be a string or/],
    ['[{"command": "x", "argv": []}]', /"argv"; an entry has "command", "args" and "env"/],
    ['[{"command": "x"', /not JSON/],
  ])('refuses %s at startup, saying why', (text, message) => {
    expect(() => parseStdioAllowlist(text)).toThrow(message);
  });

  it('makes a bad DATAAGENT_MCP_STDIO_ALLOW fail the configuration, naming the variable', () => {
    expect(() => loadConfig(McpConfig, { DATAAGENT_MCP_STDIO_ALLOW: 'mcp-files,npx' }, [])).toThrow(/DATAAGENT_MCP_STDIO_ALLOW: must list stdio commands .*"npx" runs whatever its arguments say/);
    expect(loadConfig(McpConfig, { DATAAGENT_MCP_STDIO_ALLOW: 'npx -y some-server env=API_KEY' }, []).stdioAllow).toBe('npx -y some-server env=API_KEY');
  });
});

describe('resolveStdioCommand', () => {
  it('looks a name up on absolute PATH folders only, and follows links to the real file', async () => {
    expect(await resolveStdioCommand('npx', path)).toEqual({ real: join(root, 'lib', 'npm', 'bin', 'npx-cli.js'), names: ['npx', 'npx-cli.js', 'npx-cli.js'] });
    expect(await resolveStdioCommand('sh', path)).toEqual({ real: join(bin, 'dash'), names: ['sh', 'dash', 'dash'] });
    expect(await resolveStdioCommand('weather', path)).toEqual({ error: '"weather" is not found on the workers\' PATH' });
    expect(await resolveStdioCommand('not-executable', path)).toEqual({ error: expect.stringContaining('not found') });
    expect(await resolveStdioCommand('./mcp-files', path)).toEqual({ error: expect.stringContaining('is a relative path') });
    expect(await resolveStdioCommand(join(mcp, '..'), path)).toEqual({ error: expect.stringContaining('is not an executable file') });
  });
});

describe('matchStdioServer', () => {
  it('allows a listed program with any arguments, found by name or by its path', async () => {
    expect(await match('mcp-files', server('mcp-files', ['--root', '/srv']))).toMatchObject({ ok: true });
    expect(await match('mcp-files', server(join(bin, 'mcp-files')))).toMatchObject({ ok: true });
    expect(await match(join(bin, 'mcp-files'), server('mcp-files'))).toMatchObject({ ok: true });
    expect(await match('mcp-files', server('tool'))).toMatchObject({ ok: false, field: 'command' });
  });

  it('matches a folder by real path: no "..", no link out of it, no sibling sharing its prefix', async () => {
    const folder = `${mcp}/*`;
    expect(await match(folder, server(join(mcp, 'weather'), ['--anything']))).toMatchObject({ ok: true });
    // The folder's own link resolves the same way.
    expect(await match(`${join(root, 'mcp-link')}/*`, server(join(mcp, 'weather')))).toMatchObject({ ok: true });
    expect(await match(folder, server(join(root, 'mcp-link', 'weather')))).toMatchObject({ ok: true });
    for (const escape of [`${mcp}/../../outside/tool`, `${mcp}/../mcp-evil/tool`, join(mcp, 'escape'), join(mcp, 'sh-out'), join(root, 'opt', 'mcp-evil', 'tool'), `${mcp}/../../bin/bash`]) {
      expect(await match(folder, server(escape))).toEqual({ ok: false, field: 'command', reason: expect.stringContaining('is not on the operator\'s allowlist (DATAAGENT_MCP_STDIO_ALLOW)') });
    }
  });

  it('refuses a launcher or interpreter in an allowed folder, also behind a link or a version number', async () => {
    for (const launcher of ['bash', 'python3.11', 'helper', 'shell']) {
      expect(await match(`${mcp}/*`, server(join(mcp, launcher), ['-c', 'id']))).toEqual({ ok: false, field: 'command', reason: expect.stringMatching(/runs whatever its arguments say \((bash|python3\.11|dash) is a launcher or interpreter\).*pins none/) });
      expect(await match(`${mcp}/*`, server(join(mcp, launcher)))).toMatchObject({ ok: false, field: 'command' });
    }
    // Python via a link to an interpreter outside the folder: not inside it, whatever its name.
    expect(await match(`${mcp}/*`, server(join(mcp, 'py')))).toMatchObject({ ok: false, field: 'command' });
    // A plain program's link to a launcher is judged by where it leads.
    expect(await match(join(mcp, 'helper'), server(join(mcp, 'helper'), ['-c', 'import os']))).toMatchObject({ ok: false });
  });

  it('runs a pinned launcher only with its exact arguments', async () => {
    const allow = 'npx -y @modelcontextprotocol/server-everything,node /srv/server.js --stdio';
    expect(await match(allow, server('npx', ['-y', '@modelcontextprotocol/server-everything']))).toMatchObject({ ok: true, entry: { command: 'npx' } });
    // The same program by another name or path is the same entry.
    expect(await match(allow, server(join(bin, 'npx'), ['-y', '@modelcontextprotocol/server-everything']))).toMatchObject({ ok: true });
    expect(await match(allow, server(join(root, 'lib', 'npm', 'bin', 'npx-cli.js'), ['-y', '@modelcontextprotocol/server-everything']))).toMatchObject({ ok: true });
    expect(await match(allow, server('node', ['/srv/server.js', '--stdio']))).toMatchObject({ ok: true, entry: { command: 'node' } });
    for (const [command, args] of [
      ['npx', ['-c', 'sh -c id']],
      ['npx', ['-y', '@modelcontextprotocol/server-everything', '-c', 'id']],
      ['npx', ['-y']],
      ['npx', undefined],
      ['node', ['-e', 'require("child_process").execSync("id")']],
      ['node', ['/srv/server.js']],
    ] as const) {
      const refused = await match(allow, server(command, args ? [...args] : undefined));
      expect(refused).toEqual({ ok: false, field: 'args', reason: expect.stringMatching(/runs whatever its arguments say .*may run only with the arguments the operator pinned/) });
    }
    // Not listed at all: bash -c, sh, and node under a name that is not on the list.
    expect(await match(allow, server('bash', ['-c', 'id']))).toMatchObject({ ok: false, field: 'command', reason: expect.stringContaining('"bash" is not on the operator\'s allowlist') });
    expect(await match(allow, server('sh'))).toMatchObject({ ok: false, field: 'command' });
  });

  it('lets a user set only the env names the entry lists', async () => {
    const allow = 'mcp-files env=API_KEY:OTHER_KEY';
    expect(await match(allow, server('mcp-files', [], { API_KEY: 'k', OTHER_KEY: 'o' }))).toMatchObject({ ok: true });
    expect(await match(allow, server('mcp-files', [], {}))).toMatchObject({ ok: true });
    const names = ['PYTHONWARNINGS', 'BROWSER', 'BASH_FUNC_x%%', 'GIT_SSH_COMMAND', 'GIT_CONFIG_COUNT', 'GIT_CONFIG_KEY_0', 'GIT_CONFIG_VALUE_0', 'GIT_CONFIG_GLOBAL',
      'PYTHONUSERBASE', 'JDK_JAVA_OPTIONS', 'GCONV_PATH', 'PERLLIB', 'PATH', 'HOME', 'LD_PRELOAD', 'NODE_OPTIONS', 'npm_config_registry', 'api_key'];
    for (const name of names) {
      expect(await match(allow, server('mcp-files', [], { API_KEY: 'k', [name]: 'x' }))).toEqual({
        ok: false, field: `env.${name}`, reason: `env.${name} is not passed to "mcp-files": the operator lets users set only API_KEY, OTHER_KEY for it (DATAAGENT_MCP_STDIO_ALLOW)`,
      });
    }
    expect(await match('mcp-files', server('mcp-files', [], { TOKEN: 't' }))).toMatchObject({ ok: false, field: 'env.TOKEN', reason: expect.stringContaining('users set no variable') });
    // Of two entries for one program, the one that lists the names allows them.
    expect(await match('mcp-files,mcp-files env=TOKEN', server('mcp-files', [], { TOKEN: 't' }))).toMatchObject({ ok: true, entry: { env: ['TOKEN'] } });
  });
});

describe('isLauncherName', () => {
  it.each(['npx', 'npx-cli.js', 'pnpm.cjs', 'node', 'nodejs', 'python', 'python3', 'python3.11', 'pypy3', 'perl5.36', 'ruby', 'php8.2', 'java', 'bash', 'sh', 'dash', 'zsh', 'fish', 'env', 'deno', 'bun', 'busybox', 'docker', 'podman', 'sudo', 'xargs', 'timeout', 'nice', 'nohup', 'setsid', 'stdbuf', 'uvx', 'uv', 'pipx', 'yarn', 'npm'])(
    '%s is a launcher',
    (name) => expect(isLauncherName(name)).toBe(true),
  );

  it.each(['mcp-server-git', 'mcp-files', 'weather', 'server.js', 'github-mcp-server', 'shellcheck', 'envoy'])('%s is not', (name) => expect(isLauncherName(name)).toBe(false));
});
