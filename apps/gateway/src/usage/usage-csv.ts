import type { UsageReport } from './usage-view.dto.js';

const SUMS = ['calls', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'cost', 'currency', 'estimated_calls'] as const;

/** The column a group's key goes in. */
const KEY_COLUMN = { day: 'day', user: 'user_id', model: 'model' } as const;

/**
 * A usage report as CSV (RFC 4180, CRLF line ends): a header line, then a line per row of the
 * JSON answer in its order. Grouped by user, the person's tenant comes first. Totals are not a
 * line of their own: a spreadsheet sums the columns.
 */
export function usageCsv(report: UsageReport): string {
  const byUser = report.group_by === 'user';
  const header = [...(byUser ? ['tenant_id'] : []), KEY_COLUMN[report.group_by], ...SUMS];
  const lines = report.rows.map((row) => [...(byUser ? [row.tenant_id ?? ''] : []), row.key, ...SUMS.map((column) => String(row[column]))]);
  return [header, ...lines].map((cells) => cells.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

/**
 * One cell: quoted when it holds a separator, a quote or a line break. A cell a spreadsheet would
 * run as a formula (`=`, `+`, `-`, `@`, tab, CR at its start: a user id or model name is text a
 * client chose) gets a `'` before it, as OWASP's CSV-injection advice says.
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
