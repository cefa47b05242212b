/** Deadlock (1213) and lock wait timeout (1205): a transaction that meets one may simply be run again. */
const CONFLICT_ERRNOS = new Set([1213, 1205]);
const MAX_ATTEMPTS = 5;

/**
 * Runs `transaction` again when InnoDB chose it as a deadlock victim or its lock wait timed out,
 * up to five attempts: writers that batch rows of many runs (the gateway's submissions, the
 * workers' starts, ends and archive) lock rows in orders that can cross.
 * @param alsoRetry More errnos worth another attempt (the archive adds duplicate key).
 * @throws the last error, or the first one that is not a conflict.
 */
export async function retryConflicts<T>(transaction: () => Promise<T>, alsoRetry: readonly number[] = []): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (error) {
      const errno = Number((error as { errno?: number }).errno);
      if (attempt >= MAX_ATTEMPTS || !(CONFLICT_ERRNOS.has(errno) || alsoRetry.includes(errno))) throw error;
    }
  }
}
