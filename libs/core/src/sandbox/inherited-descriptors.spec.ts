import { staysOpenAcrossExec } from './inherited-descriptors.js';

describe('staysOpenAcrossExec', () => {
  it('reads O_CLOEXEC from the octal flags of /proc/self/fdinfo', () => {
    expect(staysOpenAcrossExec('pos:\t0\nflags:\t01\nmnt_id:\t14\nino:\t32030\n')).toBe(true);
    expect(staysOpenAcrossExec('pos:\t0\nflags:\t02100001\nmnt_id:\t14\n')).toBe(false);
    expect(staysOpenAcrossExec('pos:\t0\nflags:\t02004002\n')).toBe(false);
    expect(staysOpenAcrossExec('pos:\t0\n')).toBeUndefined();
  });
});
