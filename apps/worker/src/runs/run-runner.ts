import { DoneEvent, ErrorEvent, RunStartedEvent, type EventDict, type ExecutionEvent } from '#core/events/execution-event.js';
import type { AgentFactory } from '#core/engine/agent-factory.js';
import type { ChatMessage } from '#core/llm/chat-model.js';
import type { ConversationStore, RunStatus } from '#core/session/session-store.js';
import type { RunJobData } from '#transport/run-queue.js';
import type { RunEventLog } from '#transport/run-event-log.js';
import type { EventArchiver } from './event-archiver.js';
import { historyBefore, toNewMessage } from './history.js';

export interface RunRunnerDeps {
  store: ConversationStore;
  log: RunEventLog;
  archiver: EventArchiver;
  agents: AgentFactory;
  workerId: string;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

type FinalStatus = Exclude<RunStatus, 'queued' | 'running'>;

/**
 * Executes one run: announces it, rebuilds the conversation, streams the agent's events
 * into the run's log, and stores the new messages before the run's `done` goes out, so a
 * client that sees `done` can read the history at once.
 */
export class RunRunner {
  private readonly active = new Map<string, AbortController>();

  constructor(private readonly deps: RunRunnerDeps) {}

  get activeCount(): number {
    return this.active.size;
  }

  /** Aborts a run held by this worker. Returns false when it holds no such run. */
  abort(runId: string, reason = 'cancelled'): boolean {
    const controller = this.active.get(runId);
    if (!controller) return false;
    controller.abort(new Error(reason));
    return true;
  }

  async run(job: RunJobData): Promise<void> {
    const { store, log, archiver, agents, workerId, logger } = this.deps;
    const envelope = { sessionId: job.sessionId, runId: job.runId };
    if (await log.isSealed(job.runId)) {
      logger.info({ run_id: job.runId }, 'run already finished; skipping');
      return;
    }
    const controller = new AbortController();
    this.active.set(job.runId, controller);
    let status: FinalStatus = 'completed';
    let failure: string | undefined;
    const added: ChatMessage[] = [];
    const publish = async (event: ExecutionEvent): Promise<EventDict | null> => {
      const stored = await log.append(event.toDict());
      if (stored) archiver.add(stored);
      else controller.abort(new Error('run sealed elsewhere'));
      return stored;
    };

    try {
      if (!(await publish(new RunStartedEvent(envelope, workerId)))) return;
      const [, records] = await Promise.all([store.runs.markStarted(job.runId), store.messages.list(job.sessionId, { limit: 10_000, offset: 0 })]);
      const executor = agents.create(job.assistantId);
      const events = executor.execute(job.message, job.sessionId, {
        runId: job.runId,
        caller: { tenantId: job.tenantId, userId: job.userId, role: 'user' },
        history: historyBefore(records, job.runId),
        signal: controller.signal,
        onMessage: (m) => added.push(m),
      });
      for await (const event of events) {
        if (event instanceof ErrorEvent) {
          status = 'failed';
          failure = event.error;
        }
        if (event instanceof DoneEvent) {
          if (event.cancelled) status = 'cancelled';
          await this.finish(job, status, failure, added);
        }
        if (!(await publish(event))) break;
      }
    } catch (err) {
      // The engine never throws; this is the store or Redis failing around it.
      logger.error({ run_id: job.runId, err }, 'run failed outside the engine');
      failure = err instanceof Error ? err.message : String(err);
      await this.finish(job, 'failed', failure, added).catch(() => undefined);
      await publish(new ErrorEvent(envelope, 'Internal error while running the agent', false, 'internal_error')).catch(() => undefined);
      await publish(new DoneEvent(envelope, false)).catch(() => undefined);
    } finally {
      this.active.delete(job.runId);
      await archiver.flushRun(job.runId);
    }
  }

  private async finish(job: RunJobData, status: FinalStatus, failure: string | undefined, added: ChatMessage[]): Promise<void> {
    const { store } = this.deps;
    if (added.length > 0 && status !== 'cancelled') {
      await store.messages.append(added.map((m) => toNewMessage(m, job.sessionId, job.runId)));
    }
    await store.runs.markFinished(job.runId, status, failure);
    await store.sessions.update(job.sessionId, { lastActiveAt: new Date() });
  }
}
