/** Exit codes of `harbor run`, documented in apps/harbor/README.md. */
export const EXIT = {
  ok: 0,
  /** The pass rate is below --min-pass-rate. */
  belowMinPassRate: 1,
  /** Bad options, a bad question file, or a server that cannot be reached or refuses the key. */
  usage: 2,
  /** The run and its report are done, but the LangSmith upload failed. */
  langsmithFailed: 3,
  /** Harbor itself failed (a bug): the message says where. */
  crashed: 70,
  /** Stopped with Ctrl-C; the report covers what finished. */
  interrupted: 130,
} as const;

/** A problem the person running Harbor can fix before any question is sent; exits with {@link EXIT.usage}. */
export class HarborUsageError extends Error {
  override readonly name = 'HarborUsageError';
}
