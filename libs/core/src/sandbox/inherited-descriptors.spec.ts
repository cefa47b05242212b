import { closeSync, fstatSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { closeInheritedDescriptors, staysOpenAcrossExec } from './inherited-descriptors.js';

describe('staysOpenAcrossExec', () => {
  it('reads O_CLOEXEC from the octal flags of /proc/self/fdinfo', () => {
    expect(staysOpenAcrossExec('pos:\t0\nflags:\t01\nmnt_id:\t14\nino:\t32030\n')).toBe(true);
    expect(staysOpenAcrossExec('pos:\t0\nflags:\t02100001\nmnt_id:\t14\n')).toBe(false);
    expect(staysOpenAcrossExec('pos:\t0\nflags:\t02004002\n')).toBe(false);
    expect(staysOpenAcrossExec('pos:\t0\n')).toBeUndefined();
  });
});

describe('closeInheritedDescriptors', () => {
  it('closes what a /proc listing shows open across exec, and leaves the ones it is told to keep (an IPC channel)', () => {
    const proc = mkdtempSync(path.join(tmpdir(), 'fake-proc-'));
    const [kept, inherited, own] = [openSync('/dev/null', 'r'), openSync('/dev/null', 'r'), openSync('/dev/null', 'r')];
    try {
      mkdirSync(path.join(proc, 'fd'));
      mkdirSync(path.join(proc, 'fdinfo'));
      for (const [fd, flags] of [[kept, '01'], [inherited, '01'], [own, '02000000'], [1, '01']] as const) {
        symlinkSync(`pipe:[${fd}]`, path.join(proc, 'fd', String(fd)));
        writeFileSync(path.join(proc, 'fdinfo', String(fd)), `pos:\t0\nflags:\t${flags}\n`);
      }
      expect(closeInheritedDescriptors(proc, [kept])).toEqual([{ fd: inherited, target: `pipe:[${inherited}]` }]);
      expect(() => fstatSync(inherited)).toThrow();
      expect(fstatSync(kept).isCharacterDevice()).toBe(true);
      expect(fstatSync(own).isCharacterDevice()).toBe(true);
    } finally {
      for (const fd of [kept, own]) closeSync(fd);
      rmSync(proc, { recursive: true, force: true });
    }
  });
});
