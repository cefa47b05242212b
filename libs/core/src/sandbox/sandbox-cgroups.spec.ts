import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SandboxCgroups } from './sandbox-cgroups.js';

/** A folder laid out like a cgroup mount (the files `detect` looks for); writes land in plain files. */
function fakeRoot(version: 'v1' | 'v2'): string {
  const root = mkdtempSync(path.join(tmpdir(), `da-cgroups-${version}-`));
  if (version === 'v2') {
    writeFileSync(path.join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids');
  } else {
    for (const [dir, file] of [['memory', 'memory.limit_in_bytes'], ['pids', 'cgroup.procs'], ['cpu', 'cpu.cfs_quota_us']]) {
      mkdirSync(path.join(root, dir));
      writeFileSync(path.join(root, dir, file), '');
    }
  }
  return root;
}

const read = (...parts: string[]) => readFileSync(path.join(...parts), 'utf8');

describe('SandboxCgroups', () => {
  const roots: string[] = [];
  afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

  it('v1: each sandbox in its tenant\'s cpu group, both with a CFS quota, and the sandboxes together weighing less than the worker', () => {
    const root = fakeRoot('v1');
    roots.push(root);
    const groups = SandboxCgroups.detect(root, { tenantCpus: 1.5 })!;
    expect(groups).toMatchObject({ version: 'v1', boundsCpu: true });
    const parent = path.join(root, 'cpu', 'dataagent-sandboxes');
    expect(read(parent, 'cpu.shares')).toBe('256');

    const group = groups.create({ memoryBytes: 128 * 1024 ** 2, processes: 32, cpus: 1 }, 'acme');
    const tenants = readdirSync(parent).filter((name) => name.startsWith('tenant-'));
    expect(tenants).toHaveLength(1);
    const tenant = path.join(parent, tenants[0]!);
    expect([read(tenant, 'cpu.cfs_period_us'), read(tenant, 'cpu.cfs_quota_us')]).toEqual(['100000', '150000']);
    const sandbox = path.dirname(group.procs.find((file) => file.startsWith(tenant))!);
    expect([read(sandbox, 'cpu.cfs_period_us'), read(sandbox, 'cpu.cfs_quota_us')]).toEqual(['100000', '100000']);
    expect(group.procs).toEqual([
      expect.stringMatching(new RegExp(`^${root}/memory/dataagent-sandboxes/\\d+-\\d+/cgroup.procs$`)),
      expect.stringMatching(new RegExp(`^${root}/pids/dataagent-sandboxes/\\d+-\\d+/cgroup.procs$`)),
      path.join(sandbox, 'cgroup.procs'),
    ]);
    const memory = path.dirname(group.procs[0]!);
    expect([read(memory, 'memory.limit_in_bytes'), read(path.dirname(group.procs[1]!), 'pids.max')]).toEqual([String(128 * 1024 ** 2), '32']);

    // Another of acme's sandboxes shares the tenant's group; globex gets one of its own. A
    // sandbox may not be given more than its tenant (v1 refuses a quota above the parent's).
    const again = groups.create({ memoryBytes: 128 * 1024 ** 2, processes: 32, cpus: 4 }, 'acme');
    expect(path.dirname(path.dirname(again.procs[2]!))).toBe(tenant);
    expect(read(path.dirname(again.procs[2]!), 'cpu.cfs_quota_us')).toBe('150000');
    const other = groups.create({ memoryBytes: 128 * 1024 ** 2, processes: 32, cpus: 1 }, 'globex');
    expect(path.dirname(path.dirname(other.procs[2]!))).not.toBe(tenant);
  });

  it('v2: sandboxes nested under their tenant, cpu handed down, cpu.max on both', () => {
    const root = fakeRoot('v2');
    roots.push(root);
    const groups = SandboxCgroups.detect(root, { tenantCpus: 2 })!;
    expect(groups).toMatchObject({ version: 'v2', boundsCpu: true });
    const parent = path.join(root, 'dataagent-sandboxes');
    expect([read(parent, 'cgroup.subtree_control'), read(parent, 'cpu.weight')]).toEqual(['+memory +pids +cpu', '25']);

    const group = groups.create({ memoryBytes: 64 * 1024 ** 2, processes: 16, cpus: 0.5 }, 'acme');
    expect(group.procs).toHaveLength(1);
    const sandbox = path.dirname(group.procs[0]!);
    const tenant = path.dirname(sandbox);
    expect(path.dirname(tenant)).toBe(parent);
    expect([read(tenant, 'cgroup.subtree_control'), read(tenant, 'cpu.max')]).toEqual(['+memory +pids +cpu', '200000 100000']);
    expect([read(sandbox, 'cpu.max'), read(sandbox, 'memory.max'), read(sandbox, 'pids.max')]).toEqual(['50000 100000', String(64 * 1024 ** 2), '16']);
  });

  it('v1 without the cpu hierarchy: memory and processes only, as before', () => {
    const root = fakeRoot('v1');
    roots.push(root);
    rmSync(path.join(root, 'cpu'), { recursive: true });
    const groups = SandboxCgroups.detect(root, { tenantCpus: 1 })!;
    expect(groups.boundsCpu).toBe(false);
    expect(groups.create({ memoryBytes: 64 * 1024 ** 2, processes: 16, cpus: 1 }, 'acme').procs).toHaveLength(2);
  });
});
