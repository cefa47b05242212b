import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BwrapSandbox } from './sandbox.js';
import { untilLoopbackUp } from './sandbox-loopback.js';

// A process in a network namespace of its own, whose `lo` is down as the kernel makes it.
async function isolated() {
  const child = spawn('unshare', ['--user', '--map-root-user', '--net', 'sleep', '30'], { stdio: 'ignore' });
  const own = readlinkSync('/proc/self/ns/net');
  for (let i = 0; i < 500; i++) {
    try {
      if (readlinkSync(`/proc/${child.pid}/ns/net`) !== own) return child;
    } catch {
      // not there yet
    }
    await sleep(10);
  }
  child.kill('SIGKILL');
  throw new Error('unshare did not make a network namespace');
}

describe('untilLoopbackUp', () => {
  it('waits while the namespace has no loopback address, and resolves once lo is up', async () => {
    const child = await isolated();
    try {
      let seen: string | undefined;
      const waiting = untilLoopbackUp(child.pid!).then((result) => (seen = result));
      await sleep(300);
      expect(seen).toBeUndefined();
      execFileSync('nsenter', ['--target', String(child.pid), '--user', '--net', '--preserve-credentials', 'ip', 'link', 'set', 'lo', 'up']);
      await waiting;
      expect(seen).toBe('up');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('says "gone" for a process that has ended and "timeout" when the address never comes', async () => {
    const ended = spawn('true');
    await new Promise((resolve) => ended.once('exit', resolve));
    expect(await untilLoopbackUp(ended.pid!)).toBe('gone');
    const child = await isolated();
    try {
      expect(await untilLoopbackUp(child.pid!, 100)).toBe('timeout');
    } finally {
      child.kill('SIGKILL');
    }
  });
});

/** This process's slirp4netns children still running. */
function slirpChildren(): number {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.includes('(slirp4netns)') && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid;
      } catch {
        return false;
      }
    }).length;
}

describe('a networked sandbox whose bubblewrap is slow to set up its loopback', () => {
  it('still starts: slirp4netns (which brings lo up too) waits for bubblewrap', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dataagent-loopback-'));
    // strace holds bubblewrap's netlink bind (its loopback setup) for 300 ms: without the wait,
    // slirp4netns brings lo up first and bubblewrap dies with "loopback: Failed RTM_NEWADDR".
    const slowBwrap = path.join(dir, 'bwrap');
    const [strace, bwrap] = ['strace', 'bwrap'].map((name) => execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim());
    writeFileSync(slowBwrap, `#!/bin/sh\nexec ${strace} -f -o /dev/null -e trace=bind -e inject=bind:delay_enter=300000 ${bwrap} "$@"\n`, { mode: 0o755 });
    const sandbox = new BwrapSandbox({ bwrap: slowBwrap, slirp4netns: 'slirp4netns' });
    try {
      const child = sandbox.spawn({ command: '/bin/sh', args: ['-c', 'echo started'], env: { PATH: '/usr/bin:/bin' }, workspace: dir, network: true }, ['ignore', 'pipe', 'pipe']);
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise((resolve) => child.once('close', resolve));
      expect({ code, output: output.trim() }).toEqual({ code: 0, output: 'started' });
      // And slirp4netns ends with it (closing its exit fd; ending the write side alone left it running).
      for (let i = 0; i < 200 && slirpChildren() > 0; i++) await sleep(10);
      expect(slirpChildren()).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
