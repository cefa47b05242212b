/** The CLI's exit codes: scripts tell an answer from a failure, a refusal and a Ctrl-C. */
export const EXIT = {
  ok: 0,
  /** The run failed (model or tool error, gateway unreachable). */
  error: 1,
  /** Bad flags or configuration. */
  usage: 2,
  /** The run ended cancelled: an approval was rejected. */
  cancelled: 3,
  /** Ctrl-C (SIGINT) cancelled the run: 128 + SIGINT, as shells report it. */
  interrupted: 130,
} as const;
