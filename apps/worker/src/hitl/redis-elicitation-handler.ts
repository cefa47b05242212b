import { randomUUID } from 'node:crypto';
import { ElicitationEvent, ElicitationRequestEvent, type ElicitationEndReason, type ElicitationPrompt } from '#core/events/execution-event.js';
import type { ElicitationAnswer, ElicitationCall, ElicitationHandler } from '#core/hitl/elicitation.js';
import type { Caller } from '#core/auth/caller.js';
import type { ElicitationRecord, ElicitationRequests } from '#transport/elicitation-requests.js';
import type { DecisionWaiters } from './decision-waiters.js';

export interface RedisElicitationOptions {
  /** How long a question waits for its answer before it counts as `cancel` (DATAAGENT_ELICITATION_TIMEOUT). */
  timeoutMs: number;
}

type Outcome = { answer: ElicitationAnswer; reason?: ElicitationEndReason };

/**
 * Asks a run's person what an MCP server wants to know during a tool call: records the
 * question in Redis (so any gateway takes the answer, from the run's owner only, once), sends
 * `elicitation_request`, waits on this worker for the answer (control message, the record
 * checked too), and sends `elicitation` with how it ended. The run cannot park meanwhile: the
 * server holds the call open, so the run keeps its worker slot until the answer or the expiry.
 */
export class RedisElicitationHandler implements ElicitationHandler {
  constructor(
    private readonly requests: ElicitationRequests,
    private readonly waiters: DecisionWaiters,
    private readonly caller: Caller,
    private readonly options: RedisElicitationOptions,
  ) {}

  async ask(prompt: ElicitationPrompt, call: ElicitationCall, signal: AbortSignal): Promise<ElicitationAnswer> {
    if (signal.aborted) return { action: 'cancel' };
    const requestId = randomUUID();
    const expiresAt = Date.now() + this.options.timeoutMs;
    await this.requests.open({
      requestId,
      runId: call.runId,
      sessionId: call.sessionId,
      tenantId: this.caller.tenantId,
      userId: this.caller.userId,
      mode: prompt.mode,
      ...(prompt.requestedSchema ? { requestedSchema: prompt.requestedSchema } : {}),
      expiresAt,
    });
    call.emit((envelope) => new ElicitationRequestEvent(envelope, requestId, call.toolCallId, prompt, new Date(expiresAt).toISOString()));
    const { answer, reason } = await this.wait(requestId, expiresAt, signal);
    call.emit((envelope) => new ElicitationEvent(envelope, requestId, answer.action, answer.action === 'accept' ? answer.content : undefined, reason));
    return answer;
  }

  /** The owner's answer, or `cancel` at the expiry or when `signal` fires, whichever the record takes first. */
  private async wait(requestId: string, expiresAt: number, signal: AbortSignal): Promise<Outcome> {
    const outcomeOf = (record: ElicitationRecord | null): Outcome | null => {
      if (!record || record.status === 'pending') return null;
      const answer: ElicitationAnswer = record.status === 'accept' ? { action: 'accept', ...(record.content ? { content: record.content } : {}) } : { action: record.status };
      return { answer, ...(record.reason ? { reason: record.reason } : {}) };
    };
    // Redis failing here must not leave the call waiting forever: a failed read is no answer
    // yet (the expiry still comes); a failed write of the end is that end anyway.
    const read = async () => outcomeOf(await this.requests.get(requestId).catch(() => null));
    const end = async (reason: ElicitationEndReason): Promise<Outcome> => {
      const ended: Outcome = { answer: { action: 'cancel' }, reason };
      try {
        // An answer may land at the same moment: the compare-and-set decides which wins.
        const { outcome } = await this.requests.answer(requestId, null, 'cancel', undefined, reason);
        return outcome === 'ok' ? ended : ((await read()) ?? ended);
      } catch {
        return ended;
      }
    };

    let stopWaiting = () => {};
    let timer: NodeJS.Timeout | undefined;
    let onAbort = () => {};
    try {
      return await new Promise<Outcome>((resolve) => {
        stopWaiting = this.waiters.add(requestId, () => void read().then((o) => o && resolve(o)));
        onAbort = () => void end('cancelled').then(resolve);
        signal.addEventListener('abort', onAbort, { once: true });
        if (signal.aborted) return onAbort();
        timer = setTimeout(() => void end('expired').then(resolve), Math.max(0, expiresAt - Date.now()));
        // The answer may have been recorded before we started listening.
        void read().then((o) => o && resolve(o));
      });
    } finally {
      stopWaiting();
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }
}
