import { BwrapSandbox, DEFAULT_SANDBOX_UID_BASE, installFolders } from './sandbox.js';

const command = { command: '/bin/sh', args: ['-c', 'true'], env: { PATH: '/usr/bin:/bin', SECRET_FREE: 'yes' }, workspace: '/data/ws/acme/alice' };

/** The value that follows `flag` in `args`, every time it occurs. */
const valuesOf = (args: string[], flag: string) => args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []));

describe('BwrapSandbox', () => {
  it('as root: namespaces of its own, no network, and the command dropped to the caller\'s uid with no new privileges', () => {
    const sandbox = new BwrapSandbox({ root: true, systemDirs: [] });
    const user = sandbox.userFor('acme', 'alice')!;
    const args = sandbox.argumentsFor({ ...command, user });
    for (const flag of ['--unshare-pid', '--unshare-net', '--unshare-ipc', '--die-with-parent', '--new-session', '--clearenv']) expect(args).toContain(flag);
    const tail = args.slice(args.indexOf('--', args.indexOf('--clearenv')) + 1);
    expect(tail.slice(0, 6)).toEqual(['/usr/bin/setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--no-new-privs', '--']);
    expect(tail.slice(-3)).toEqual(['/bin/sh', '-c', 'true']);
    expect(tail).toEqual(expect.arrayContaining(['--nproc=64', `--data=${512 * 1024 ** 2}`]));
  });

  it('as another user: a user namespace of its own, no capabilities, no setpriv', () => {
    const sandbox = new BwrapSandbox({ root: false, systemDirs: [] });
    expect(sandbox.userFor('acme', 'alice')).toBeUndefined();
    const args = sandbox.argumentsFor(command);
    expect(args).toEqual(expect.arrayContaining(['--unshare-all', '--cap-drop', 'ALL']));
    expect(args).not.toContain('/usr/bin/setpriv');
  });

  it('gives only the workspace read-write, the rest read-only, and makes each folder above a mount passable', () => {
    const args = new BwrapSandbox({ root: true, systemDirs: [] }).argumentsFor({ ...command, readOnly: ['/opt/app/node_modules'], readWrite: ['/srv/cache'] });
    expect(valuesOf(args, '--bind')).toEqual(['/srv/cache', '/data/ws/acme/alice']);
    expect(valuesOf(args, '--ro-bind')).toEqual(['/opt/app/node_modules']);
    expect(valuesOf(args, '--dir')).toEqual(['/etc', '/opt', '/opt/app', '/srv', '/data', '/data/ws', '/data/ws/acme']);
    expect(valuesOf(args, '--setenv')).toEqual(['PATH', 'SECRET_FREE']);
  });

  it('asks bubblewrap for its child pid and to wait only for a networked server, which it refuses without slirp4netns', () => {
    const sandbox = new BwrapSandbox({ root: true, systemDirs: [] });
    expect(sandbox.argumentsFor(command)).not.toContain('--info-fd');
    expect(sandbox.argumentsFor({ ...command, network: true })).toEqual(expect.arrayContaining(['--info-fd', '3', '--block-fd', '4', '--unshare-net']));
    expect(() => sandbox.spawn({ ...command, network: true }, ['ignore', 'pipe', 'pipe'])).toThrow(/no slirp4netns/);
  });

  it('gives each user one stable uid in the range above the base', () => {
    const sandbox = new BwrapSandbox({ root: true, uid: 300_000 });
    const alice = sandbox.userFor('acme', 'alice')!;
    expect(sandbox.userFor('acme', 'alice')).toEqual(alice);
    expect(alice.uid).toBeGreaterThanOrEqual(300_000);
    expect(alice.uid).toBeLessThan(300_000 + 65_536);
    const others = ['bob', 'carol', 'dave', 'erin'].map((u) => sandbox.userFor('acme', u)!.uid);
    expect(new Set([alice.uid, ...others]).size).toBe(5);
    // The tenant is part of it: alice of another tenant is someone else.
    expect(sandbox.userFor('globex', 'alice')!.uid).not.toBe(alice.uid);
    expect(new BwrapSandbox({ root: true }).userFor('acme', 'alice')!.uid).toBeGreaterThanOrEqual(DEFAULT_SANDBOX_UID_BASE);
  });
});

describe('BwrapSandbox file size', () => {
  it("caps each file at the workspace quota's room when that is less than the file size limit", () => {
    const sandbox = new BwrapSandbox({ root: true, systemDirs: [], limits: { fileBytes: 1_000 } });
    expect(sandbox.argumentsFor({ ...command, writeRoom: 400 })).toContain('--fsize=400');
    expect(sandbox.argumentsFor({ ...command, writeRoom: 0 })).toContain('--fsize=0');
    expect(sandbox.argumentsFor({ ...command, writeRoom: 5_000 })).toContain('--fsize=1000');
    expect(sandbox.argumentsFor(command)).toContain('--fsize=1000');
  });
});

describe('installFolders', () => {
  const present = new Set(['/srv/app/node_modules/pkg/dist/index.js', '/srv/app/node_modules', '/srv/tools/server.mjs', '/srv/node_modules', '/usr/bin/node']);
  const exists = (p: string) => present.has(p);

  it('takes the outermost node_modules of a package script, and nothing of the system', () => {
    expect(installFolders('/usr/bin/node', ['/srv/app/node_modules/pkg/dist/index.js', 'stdio'], exists)).toEqual(['/srv/app/node_modules']);
  });

  it("takes a script's folder and the nearest node_modules above it", () => {
    expect(installFolders('/usr/bin/node', ['/srv/tools/server.mjs'], exists)).toEqual(['/srv/tools', '/srv/node_modules']);
  });

  it('ignores relative and missing paths', () => {
    expect(installFolders('node', ['server.js', '/srv/missing.js'], exists)).toEqual([]);
  });

  it("never gives the host's root, whatever a path at the top names", () => {
    const top = (p: string) => p === '/' || p === '/data' || p === '/srv-tool';
    expect(installFolders('/srv-tool', ['/', '/data'], top)).toEqual([]);
  });
});
