import { render } from 'ink';
import { createElement as h } from 'react';
import type { AgentBackend } from '../agent/agent-backend.js';
import { App } from '../ui/app.js';
import type { InteractiveSession } from '../ui/interactive-session.js';
import { EXIT } from './exit-codes.js';

/**
 * `dataagent` on a terminal: the interactive UI until /exit, Ctrl-D or a double Ctrl-C. The
 * session's approver and notices were handed to the backend when it was opened.
 */
export async function runInteractive(session: InteractiveSession, backend: AgentBackend): Promise<number> {
  session.backend = backend;
  // Ctrl-C is a key here (cancel the answer), not a signal that ends the process.
  const ink = render(h(App, { session }), { exitOnCtrlC: false });
  await session.exited;
  ink.unmount();
  await ink.waitUntilExit();
  return EXIT.ok;
}
