import { DESCRIPTOR_RESERVE, openFilesLimit, streamCapacity } from './open-files.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             63432                63432                processes
Max open files            20000                1048576              files
Max locked memory         8388608              8388608              bytes`;

describe('openFilesLimit', () => {
  it('reads the soft limit on open files', () => {
    expect(openFilesLimit(LIMITS)).toBe(20_000);
  });

  it('knows none when unlimited or unreadable', () => {
    expect(openFilesLimit(LIMITS.replace('20000 ', 'unlimited'))).toBeNull();
    expect(openFilesLimit(null)).toBeNull();
  });
});

describe('streamCapacity', () => {
  it('defaults to half the open files, so descriptors never run out before streams are refused', () => {
    expect(streamCapacity(undefined, 20_000)).toBe(10_000);
    expect(streamCapacity(undefined, null)).toBeNull();
  });

  it('takes a setting that leaves the reserve', () => {
    expect(streamCapacity(18_976, 20_000)).toBe(20_000 - DESCRIPTOR_RESERVE);
    expect(streamCapacity(50_000, null)).toBe(50_000);
  });

  it('refuses at startup a setting past the open-files limit, naming the variable', () => {
    expect(() => streamCapacity(19_500, 20_000)).toThrow(/DATAAGENT_MAX_STREAMS_PER_GATEWAY=19500 .* lower it to 18976/);
  });
});
