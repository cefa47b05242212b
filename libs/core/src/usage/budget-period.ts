/** How long a budget's count runs before it starts again: a calendar day or month, in the tenant's time zone. */
export type BudgetPeriod = 'day' | 'month';

/** One period of a budget: its key (`2026-12-08` or `2026-12`, local dates), and when it starts and ends. */
export interface PeriodWindow {
  key: string;
  startsAt: Date;
  resetsAt: Date;
}

/** Whether a time zone name is one this runtime knows (`UTC`, `Asia/Shanghai`, `America/New_York`). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The period that holds `now`, in `timeZone`. */
export function periodOf(now: Date, period: BudgetPeriod, timeZone = 'UTC'): PeriodWindow {
  const { year, month, day } = localDate(now, timeZone);
  if (period === 'day') {
    return { key: `${year}-${pad(month)}-${pad(day)}`, startsAt: localMidnight(year, month, day, timeZone), resetsAt: localMidnight(year, month, day + 1, timeZone) };
  }
  return { key: `${year}-${pad(month)}`, startsAt: localMidnight(year, month, 1, timeZone), resetsAt: localMidnight(year, month + 1, 1, timeZone) };
}

/** The local calendar date of an instant in a time zone. */
export function localDate(at: Date, timeZone: string): { year: number; month: number; day: number } {
  const parts = dateParts(at, timeZone);
  return { year: parts.year, month: parts.month, day: parts.day };
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function dateParts(at: Date, timeZone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(at).map((p) => [p.type, p.value]));
  return { year: Number(parts.year), month: Number(parts.month), day: Number(parts.day), hour: Number(parts.hour), minute: Number(parts.minute), second: Number(parts.second) };
}

/** The zone's offset from UTC at an instant, in ms (east positive). */
function offsetAt(at: number, timeZone: string): number {
  const p = dateParts(new Date(at), timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(at / 1000) * 1000;
}

/**
 * The instant local midnight starts the given date (month and day may overflow: day 32 is the
 * next month's first). Where a DST change skips midnight, the first instant of that day.
 */
function localMidnight(year: number, month: number, day: number, timeZone: string): Date {
  const wall = Date.UTC(year, month - 1, day);
  // Two rounds settle the offset across a DST change between the guess and the answer.
  let at = wall - offsetAt(wall, timeZone);
  at = wall - offsetAt(at, timeZone);
  // Midnight skipped (clocks went forward at 00:00): the day starts at the first instant that is on it.
  const local = dateParts(new Date(at), timeZone);
  if (Date.UTC(local.year, local.month - 1, local.day) < wall) at += 3_600_000 - (at % 3_600_000 === 0 ? 0 : at % 3_600_000);
  return new Date(at);
}
