import type { EventDict } from '#core/events/execution-event.js';
import type { Output } from './print-renderer.js';

/** `--json`: each event dict as one line, for scripts; errors go to stderr as well, for people. */
export class JsonRenderer {
  constructor(private readonly out: Output, private readonly err: Output) {}

  render(e: EventDict): void {
    this.out.write(`${JSON.stringify(e)}\n`);
    if (e.event_type === 'error') this.err.write(`dataagent: error: ${e.error}\n`);
  }
}
