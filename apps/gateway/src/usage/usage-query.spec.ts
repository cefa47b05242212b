import { BadUsageQueryError, MAX_REPORT_DAYS, readUsageQuery } from './usage-query.js';

const NOW = new Date('2026-12-08T01:30:00Z');

/** The parameter a bad query is refused for. */
function refused(params: Parameters<typeof readUsageQuery>[0], accept?: string): string {
  try {
    readUsageQuery(params, NOW, accept);
  } catch (err) {
    if (err instanceof BadUsageQueryError) return err.field;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(params)}`);
}

describe('reading a usage query', () => {
  it('defaults to the current month (UTC) up to today, grouped by day, as JSON', () => {
    expect(readUsageQuery({}, NOW)).toEqual({ from: '2026-12-01', to: '2026-12-08', groupBy: 'day', format: 'json' });
    // Late on the 31st somewhere west of UTC is already the 1st of the next month in UTC.
    expect(readUsageQuery({}, new Date('2027-01-01T00:00:00Z'))).toMatchObject({ from: '2027-01-01', to: '2027-01-01' });
  });

  it('takes dates, filters and a grouping as given; an empty filter is none', () => {
    expect(readUsageQuery({ from: '2026-11-30', to: '2026-12-02', user_id: 'bob', model: 'openai:gpt-4o', group_by: 'model' }, NOW)).toEqual({
      from: '2026-11-30',
      to: '2026-12-02',
      userId: 'bob',
      model: 'openai:gpt-4o',
      groupBy: 'model',
      format: 'json',
    });
    expect(readUsageQuery({ from: '2026-12-05', to: '2026-12-05', user_id: '', model: '' }, NOW)).toEqual({ from: '2026-12-05', to: '2026-12-05', groupBy: 'day', format: 'json' });
    expect(readUsageQuery({ group_by: 'user' }, NOW).groupBy).toBe('user');
  });

  it('answers CSV for format=csv, or an Accept that prefers text/csv', () => {
    expect(readUsageQuery({ format: 'csv' }, NOW).format).toBe('csv');
    expect(readUsageQuery({}, NOW, 'text/csv').format).toBe('csv');
    expect(readUsageQuery({}, NOW, 'text/csv;q=0.9, application/json').format).toBe('csv');
    expect(readUsageQuery({}, NOW, 'application/json, text/csv').format).toBe('json');
    expect(readUsageQuery({}, NOW, '*/*').format).toBe('json');
    // The parameter wins over the header.
    expect(readUsageQuery({ format: 'json' }, NOW, 'text/csv').format).toBe('json');
  });

  it('refuses dates that are not calendar dates, naming the parameter', () => {
    for (const bad of ['2026-02-30', '2026-13-01', '2026-1-01', '20261201', '2026-12-01T00:00:00Z', 'yesterday', '', '0050-01-01']) {
      expect([bad, refused({ from: bad, to: '2026-12-08' })]).toEqual([bad, 'from']);
      expect([bad, refused({ from: '2026-01-01', to: bad })]).toEqual([bad, 'to']);
    }
    expect(readUsageQuery({ from: '2024-02-29', to: '2024-02-29' }, NOW).from).toBe('2024-02-29');
  });

  it('refuses from after to, a period too long, an unknown grouping or format', () => {
    expect(refused({ from: '2026-12-09', to: '2026-12-08' })).toBe('from');
    // Without to, to is today: a from in the future is after it.
    expect(refused({ from: '2026-12-09' })).toBe('from');
    expect(refused({ from: '2000-01-01', to: '2026-12-08' })).toBe('to');
    const longest = new Date(Date.parse('2026-12-08T00:00:00Z') - (MAX_REPORT_DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
    expect(readUsageQuery({ from: longest, to: '2026-12-08' }, NOW).from).toBe(longest);
    expect(refused({ group_by: 'week' })).toBe('group_by');
    expect(refused({ group_by: 'DAY' })).toBe('group_by');
    expect(refused({ format: 'xml' })).toBe('format');
  });
});
