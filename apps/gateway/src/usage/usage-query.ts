import { USAGE_GROUPS, type UsageGroup } from '#core/usage/usage-store.js';

/** The longest period one report may cover: a few years of days is still a small answer. */
export const MAX_REPORT_DAYS = 3_700;

/** A usage query's parameters as they came (strings, or absent). */
export interface UsageQueryParams {
  from?: string;
  to?: string;
  user_id?: string;
  model?: string;
  group_by?: string;
  format?: string;
}

/** What a report asks for, read and checked: inclusive UTC dates, filters, grouping and format. */
export interface ReadUsageQuery {
  from: string;
  to: string;
  userId?: string;
  model?: string;
  groupBy: UsageGroup;
  format: 'json' | 'csv';
}

/** A parameter that cannot be read: which one, and why. */
export class BadUsageQueryError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'BadUsageQueryError';
  }
}

/**
 * Reads a usage query. `from` and `to` are calendar dates (`2026-12-01`), both included, in UTC;
 * absent, the current month up to today (`now`'s). `format` (or an `Accept` of text/csv) picks CSV.
 * @throws BadUsageQueryError naming the parameter: a date that is not one, `from` after `to`, a
 *   period longer than {@link MAX_REPORT_DAYS} days, an unknown `group_by` or `format`.
 */
export function readUsageQuery(params: UsageQueryParams, now: Date, accept?: string): ReadUsageQuery {
  const today = now.toISOString().slice(0, 10);
  const from = params.from === undefined ? `${today.slice(0, 8)}01` : readDate('from', params.from);
  const to = params.to === undefined ? today : readDate('to', params.to);
  if (from > to) throw new BadUsageQueryError('from', `from (${from}) is after to (${to})`);
  if (daysBetween(from, to) >= MAX_REPORT_DAYS) throw new BadUsageQueryError('to', `a report covers at most ${MAX_REPORT_DAYS} days`);
  const groupBy = params.group_by ?? 'day';
  if (!(USAGE_GROUPS as readonly string[]).includes(groupBy)) throw new BadUsageQueryError('group_by', `group_by must be one of ${USAGE_GROUPS.join(', ')}, not "${groupBy}"`);
  const format = params.format ?? (wantsCsv(accept) ? 'csv' : 'json');
  if (format !== 'json' && format !== 'csv') throw new BadUsageQueryError('format', `format must be json or csv, not "${format}"`);
  return {
    from,
    to,
    ...(params.user_id !== undefined && params.user_id !== '' ? { userId: params.user_id } : {}),
    ...(params.model !== undefined && params.model !== '' ? { model: params.model } : {}),
    groupBy: groupBy as UsageGroup,
    format,
  };
}

/** A calendar date written `YYYY-MM-DD` that exists (no 2026-02-30). */
function readDate(field: string, text: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : undefined;
  if (!date || date.toISOString().slice(0, 10) !== text) throw new BadUsageQueryError(field, `${field} must be a date written YYYY-MM-DD, not "${text}"`);
  return text;
}

function daysBetween(from: string, to: string): number {
  return (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000;
}

/** Whether an Accept header prefers CSV: it names text/csv before any JSON (or without one). */
function wantsCsv(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
  const csv = types.indexOf('text/csv');
  const json = types.indexOf('application/json');
  return csv >= 0 && (json < 0 || csv < json);
}
