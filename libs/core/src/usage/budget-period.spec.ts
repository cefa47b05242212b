import { isTimeZone, periodOf } from './budget-period.js';

describe('budget periods', () => {
  it('a UTC day and month start at midnight and reset at the next', () => {
    const at = new Date('2026-12-08T13:45:00Z');
    expect(periodOf(at, 'day')).toEqual({ key: '2026-12-08', startsAt: new Date('2026-12-08T00:00:00Z'), resetsAt: new Date('2026-12-09T00:00:00Z') });
    expect(periodOf(at, 'month')).toEqual({ key: '2026-12', startsAt: new Date('2026-12-01T00:00:00Z'), resetsAt: new Date('2027-01-01T00:00:00Z') });
  });

  it("a tenant's zone moves the day: 20:00 UTC is already tomorrow in Shanghai", () => {
    const at = new Date('2026-12-08T20:00:00Z');
    expect(periodOf(at, 'day', 'Asia/Shanghai')).toEqual({ key: '2026-12-09', startsAt: new Date('2026-12-08T16:00:00Z'), resetsAt: new Date('2026-12-09T16:00:00Z') });
    expect(periodOf(new Date('2026-12-31T17:00:00Z'), 'month', 'Asia/Shanghai').key).toBe('2027-01');
  });

  it('a day across a DST change is 23 or 25 hours long, and ends at local midnight', () => {
    const spring = periodOf(new Date('2026-03-08T12:00:00Z'), 'day', 'America/New_York');
    expect(spring).toEqual({ key: '2026-03-08', startsAt: new Date('2026-03-08T05:00:00Z'), resetsAt: new Date('2026-03-09T04:00:00Z') });
    const autumn = periodOf(new Date('2026-11-01T12:00:00Z'), 'day', 'America/New_York');
    expect(autumn.resetsAt.getTime() - autumn.startsAt.getTime()).toBe(25 * 3_600_000);
  });

  it('a zone that skips midnight starts its day at the first instant on it', () => {
    // Santiago moves its clocks from 00:00 to 01:00 on 2026-09-06.
    const day = periodOf(new Date('2026-09-06T12:00:00Z'), 'day', 'America/Santiago');
    expect(day.key).toBe('2026-09-06');
    expect(day.startsAt).toEqual(new Date('2026-09-06T04:00:00Z'));
  });

  it('the instant a period resets belongs to the next one', () => {
    const first = periodOf(new Date('2026-12-08T10:00:00Z'), 'day', 'Europe/Berlin');
    expect(periodOf(first.resetsAt, 'day', 'Europe/Berlin').key).toBe('2026-12-09');
    expect(periodOf(new Date(first.resetsAt.getTime() - 1), 'day', 'Europe/Berlin').key).toBe('2026-12-08');
  });

  it('knows a zone name from a typo', () => {
    expect(isTimeZone('Asia/Shanghai')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });
});
