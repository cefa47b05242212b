import { csvCell, usageCsv } from './usage-csv.js';
import type { UsageReport } from './usage-view.dto.js';

const SUMS = { currency: 'USD', calls: 3, input_tokens: 3021, output_tokens: 305, cached_input_tokens: 500, cost: '0.011677500000', estimated_calls: 1 };

function report(groupBy: UsageReport['group_by'], rows: UsageReport['rows']): UsageReport {
  return { from: '2026-12-01', to: '2026-12-08', group_by: groupBy, tenant_id: 'acme', user_id: null, model: null, rows, totals: [] };
}

describe('a usage report as CSV', () => {
  it('has a header line naming the group, then a line per row in order, CRLF-ended', () => {
    const csv = usageCsv(report('day', [{ key: '2026-12-07', ...SUMS }, { key: '2026-12-08', ...SUMS, calls: 1, cost: '12.000000000001' }]));
    expect(csv).toBe(
      'day,calls,input_tokens,output_tokens,cached_input_tokens,cost,currency,estimated_calls\r\n' +
        '2026-12-07,3,3021,305,500,0.011677500000,USD,1\r\n' +
        '2026-12-08,1,3021,305,500,12.000000000001,USD,1\r\n',
    );
    expect(usageCsv(report('model', [{ key: 'openai:gpt-4o', ...SUMS }]))).toMatch(/^model,calls,.*\r\nopenai:gpt-4o,3,/);
  });

  it("puts the person's tenant before the user id when grouped by user", () => {
    const csv = usageCsv(report('user', [{ key: 'alice', tenant_id: 'acme', ...SUMS }]));
    expect(csv.split('\r\n').slice(0, 2)).toEqual(['tenant_id,user_id,calls,input_tokens,output_tokens,cached_input_tokens,cost,currency,estimated_calls', 'acme,alice,3,3021,305,500,0.011677500000,USD,1']);
  });

  it('is only a header without rows', () => {
    expect(usageCsv(report('day', []))).toBe('day,calls,input_tokens,output_tokens,cached_input_tokens,cost,currency,estimated_calls\r\n');
  });

  it('quotes separators, quotes and line breaks, and defuses formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('@me')).toBe("'@me");
    expect(csvCell('-2')).toBe("'-2");
    const csv = usageCsv(report('user', [{ key: '=cmd|x', tenant_id: 'a,b', ...SUMS }]));
    expect(csv.split('\r\n')[1]).toBe('"a,b",\'=cmd|x,3,3021,305,500,0.011677500000,USD,1');
  });
});
