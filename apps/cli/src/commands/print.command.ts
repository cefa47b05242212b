import type { DoneEventDict } from '#core/events/execution-event.js';
import type { AgentBackend } from '../agent/agent-backend.js';
import { REJECTED_HINT } from '../hitl/approval-mode.js';
import { JsonRenderer } from '../ui/json-renderer.js';
import { PrintRenderer, type RenderTarget } from '../ui/print-renderer.js';
import { EXIT } from './exit-codes.js';

export interface PrintOptions {
  json: boolean;
}

/**
 * `dataagent -p QUESTION`: one run, its events printed, then the exit code: 0 answered, 1 an
 * error, 3 cancelled (an approval rejected), 130 interrupted by Ctrl-C (the run is cancelled first).
 */
export async function runPrint(backend: AgentBackend, question: string, options: PrintOptions, target: RenderTarget): Promise<number> {
  const renderer = options.json ? new JsonRenderer(target.out, target.err) : new PrintRenderer(target);
  const abort = new AbortController();
  const interrupt = () => abort.abort();
  // Once: a second Ctrl-C, while the cancel is under way, ends the process as usual.
  process.once('SIGINT', interrupt);
  let failed = false;
  let done: DoneEventDict | undefined;
  try {
    for await (const event of backend.run(question, abort.signal)) {
      renderer.render(event);
      if (event.event_type === 'error') failed = true;
      if (event.event_type === 'done') done = event;
    }
  } finally {
    process.off('SIGINT', interrupt);
  }
  if (!options.json && backend.sessionId) target.err.write(`dataagent: session ${backend.sessionId} (continue it with --resume ${backend.sessionId})\n`);
  if (abort.signal.aborted) return EXIT.interrupted;
  if (done?.reason === 'rejected') target.err.write(`dataagent: ${REJECTED_HINT}\n`);
  if (failed || !done) return EXIT.error;
  return done.cancelled ? EXIT.cancelled : EXIT.ok;
}
