import { randomUUID } from 'node:crypto';
import { ElicitationEvent, ElicitationRequestEvent, type ElicitationPrompt } from '#core/events/execution-event.js';
import { checkElicitationContent, type ElicitationAnswer, type ElicitationCall, type ElicitationHandler } from '#core/hitl/elicitation.js';
import type { Elicitor } from './elicitor.js';

/** Times a form that does not fit is asked again before the question is cancelled. */
const FORM_ATTEMPTS = 5;

/**
 * The local agent's MCP elicitations with a person at the terminal: the question is shown
 * (`elicitation_request`), an accepted form gets its defaults filled and is checked against its
 * schema (asked again, field by field, when it does not fit), and how it ended goes out
 * (`elicitation`). No answer within `timeoutMs` is `cancel`, as on the server.
 */
export class LocalElicitation implements ElicitationHandler {
  constructor(
    private readonly elicitor: Elicitor,
    private readonly timeoutMs: number,
  ) {}

  async ask(prompt: ElicitationPrompt, call: ElicitationCall, signal: AbortSignal): Promise<ElicitationAnswer> {
    const requestId = randomUUID();
    call.emit((envelope) => new ElicitationRequestEvent(envelope, requestId, call.toolCallId, prompt, new Date(Date.now() + this.timeoutMs).toISOString()));
    const open = AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)]);
    let problems: Record<string, string[]> | undefined;
    for (let attempt = 0; attempt < FORM_ATTEMPTS && !open.aborted; attempt++) {
      const question = { requestId, server: prompt.server, mode: prompt.mode, message: prompt.message, ...(prompt.requestedSchema ? { schema: prompt.requestedSchema } : {}), ...(prompt.url ? { url: prompt.url } : {}), ...(problems ? { problems } : {}) };
      const reply = await this.elicitor(question, open);
      if (open.aborted) break;
      if (reply.action !== 'accept' || prompt.mode !== 'form') return this.ended(call, requestId, reply.action === 'accept' ? { action: 'accept' } : reply);
      const checked = checkElicitationContent(prompt.requestedSchema ?? { type: 'object', properties: {} }, reply.content ?? {});
      if (checked.ok) return this.ended(call, requestId, { action: 'accept', content: checked.content });
      problems = Object.fromEntries(checked.fields.map((f) => [f.field, [f.problem]]));
    }
    return this.ended(call, requestId, { action: 'cancel' }, signal.aborted || !open.aborted ? 'cancelled' : 'expired');
  }

  private ended(call: ElicitationCall, requestId: string, answer: ElicitationAnswer, reason?: 'expired' | 'cancelled'): ElicitationAnswer {
    call.emit((envelope) => new ElicitationEvent(envelope, requestId, answer.action, answer.action === 'accept' ? answer.content : undefined, reason));
    return answer;
  }
}
