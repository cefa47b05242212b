import { io, type Socket } from 'socket.io-client';
import type { ElicitationRequestEventDict, EventDict, HitlRequestEventDict } from '#core/events/execution-event.js';
import type { ApprovalMode } from '../hitl/approval-mode.js';
import type { ApprovalAnswer, Approver } from '../hitl/approver.js';
import type { Elicitor } from '../hitl/elicitor.js';
import type { AgentBackend, McpServerLine, SessionSummary } from './agent-backend.js';
import { EventQueue } from './event-queue.js';

/** Thrown when the gateway cannot be reached, refuses the key or a message, or the connection drops mid-run. */
export class GatewayError extends Error {}

export interface RemoteOptions {
  server: string;
  apiKey?: string;
  assistantId: string;
  /** A fixed answer without a terminal (`-p`), or the person asked through the interactive UI. */
  approvals: ApprovalMode | Approver;
  /** The person asked what an MCP server wants to know; absent (`-p`): every question is cancelled. */
  elicit?: Elicitor;
  resume?: string;
}

/** Times a refused form is asked again before the question is cancelled. */
const FORM_ATTEMPTS = 5;

interface Ack {
  ok: boolean;
  session_id?: string;
  run_id?: string;
  error_code?: string;
  message?: string;
}

/** The gateway's own error event (seq 0) for a refused message: a refused form names its fields. */
type RefusalEvent = { event_type: 'error'; seq: 0; error_code: string; details?: { fields?: Record<string, string[]> } };

/** A DataAgent gateway over Socket.IO (`/chat`): the run happens on its workers. */
export class RemoteBackend implements AgentBackend {
  sessionId: string | undefined;
  private lastRefusal: RefusalEvent | undefined;

  private constructor(private readonly socket: Socket, private readonly options: RemoteOptions) {
    this.sessionId = options.resume;
  }

  /** @throws GatewayError when the connection fails (unreachable, bad key). */
  static async connect(options: RemoteOptions): Promise<RemoteBackend> {
    const socket = io(new URL('/chat', options.server).href, {
      auth: options.apiKey ? { apiKey: options.apiKey } : {},
      transports: ['websocket'],
      reconnection: false,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('connect_error', (err: Error & { data?: { message?: string } }) => {
        socket.close();
        reject(new GatewayError(`cannot connect to ${options.server}: ${err.data?.message ?? err.message}`));
      });
    });
    return new RemoteBackend(socket, options);
  }

  async *run(message: string, signal: AbortSignal): AsyncIterable<EventDict> {
    const queue = new EventQueue<EventDict>();
    // A question open at the terminal closes when it ends elsewhere (answered, expired, the call ended).
    const questions = new Map<string, AbortController>();
    // Events may arrive before the acknowledgement names the run: keep them all, filter after.
    const onEvent = (e: EventDict | RefusalEvent) => {
      if (e.event_type === 'error' && !e.seq && e.error_code === 'invalid_elicitation_content') this.lastRefusal = e as RefusalEvent;
      if (e.event_type === 'elicitation') questions.get(e.request_id)?.abort();
      if (e.event_type === 'tool_result' || e.event_type === 'done') for (const q of questions.values()) q.abort();
      queue.push(e as EventDict);
    };
    let lost: string | undefined;
    const onDisconnect = (reason: string) => {
      lost = reason;
      queue.end();
    };
    this.socket.on('event', onEvent);
    this.socket.on('disconnect', onDisconnect);
    try {
      const payload = { message, assistant_id: this.options.assistantId, ...(this.sessionId ? { session_id: this.sessionId } : {}) };
      const ack = (await this.socket.emitWithAck('message', { type: 'chat', payload })) as Ack;
      if (!ack.ok || !ack.run_id) throw new GatewayError(`the gateway refused the message: ${ack.error_code ?? 'unknown'}${ack.message ? ` (${ack.message})` : ''}`);
      this.sessionId = ack.session_id;
      const cancel = () => void this.socket.emit('message', { type: 'cancel', payload: { session_id: ack.session_id } });
      if (signal.aborted) cancel();
      signal.addEventListener('abort', cancel, { once: true });
      try {
        for await (const event of queue) {
          if (event.run_id !== ack.run_id) continue;
          yield event;
          if (event.event_type === 'hitl_request') {
            const decision = await this.decide(event, signal);
            // A cancelled run needs no answer: the gateway ends the wait itself.
            if (!signal.aborted) this.socket.emit('message', { type: 'hitl_decision', payload: { request_id: event.request_id, decision } });
          }
          if (event.event_type === 'elicitation_request') {
            const question = new AbortController();
            questions.set(event.request_id, question);
            const stop = () => question.abort();
            signal.addEventListener('abort', stop, { once: true });
            // Not awaited: the events that end the question must still reach the loop.
            void this.answerElicitation(event, question.signal).finally(() => {
              signal.removeEventListener('abort', stop);
              questions.delete(event.request_id);
            });
          }
          if (event.event_type === 'done') return;
        }
        throw new GatewayError(`lost the connection to the gateway (${lost ?? 'closed'}) before the run ended`);
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    } finally {
      this.socket.off('event', onEvent);
      this.socket.off('disconnect', onDisconnect);
    }
  }

  newSession(): void {
    this.sessionId = undefined;
  }

  /** @throws GatewayError when the gateway has no such session of this key's user. */
  async resume(sessionId: string): Promise<void> {
    // The gateway's id of the session: `sessionId` may be the name a dialect's client gave it.
    const session = (await this.get(`/api/v1/sessions/${encodeURIComponent(sessionId)}`)) as { session_id: string };
    this.sessionId = session.session_id;
  }

  /** The gateway's sessions of this key's user (`GET /api/v1/sessions`). */
  async sessions(): Promise<SessionSummary[]> {
    const { sessions } = (await this.get('/api/v1/sessions?limit=20')) as { sessions: Array<{ session_id: string; title: string; last_active_at: string }> };
    return sessions.map((s) => ({ id: s.session_id, title: s.title, updatedAt: new Date(s.last_active_at) }));
  }

  /** The user's own MCP servers and the operator's they get, with the status workers last reported. */
  async mcpServers(): Promise<McpServerLine[]> {
    const me = (await this.get('/api/v1/me')) as { user_id: string };
    type View = { name: string; status: string; tool_count: number | null; last_error: string | null };
    const list = (await this.get(`/api/v1/users/${encodeURIComponent(me.user_id)}/mcp-servers`)) as { servers: View[]; global_servers: View[] };
    return [...list.servers, ...list.global_servers].map((s) => ({ name: s.name, status: s.status, tools: s.tool_count, reason: s.last_error }));
  }

  async close(): Promise<void> {
    this.socket.close();
  }

  private decide(event: HitlRequestEventDict, signal: AbortSignal): Promise<ApprovalAnswer> {
    const { approvals } = this.options;
    if (typeof approvals !== 'function') return Promise.resolve(approvals === 'approve_all' ? 'approve_all' : 'reject');
    return approvals({ requestId: event.request_id, action: event.action_request }, signal);
  }

  /**
   * Asks the person (or, without a terminal, cancels) and sends the answer; a form the gateway
   * refuses is asked again with its fields' problems. Nothing is sent once the question ended.
   */
  private async answerElicitation(event: ElicitationRequestEventDict, signal: AbortSignal): Promise<void> {
    let problems: Record<string, string[]> | undefined;
    for (let attempt = 0; attempt < FORM_ATTEMPTS; attempt++) {
      const { elicit } = this.options;
      const question = { requestId: event.request_id, server: event.server, mode: event.mode, message: event.message, ...(event.requested_schema ? { schema: event.requested_schema } : {}), ...(event.url ? { url: event.url } : {}), ...(problems ? { problems } : {}) };
      const reply = elicit ? await elicit(question, signal) : ({ action: 'cancel' } as const);
      if (signal.aborted) return;
      this.lastRefusal = undefined;
      const ack = (await this.socket.emitWithAck('message', { type: 'elicitation_answer', payload: { request_id: event.request_id, ...reply } })) as Ack;
      if (ack.ok || !elicit || ack.error_code !== 'invalid_elicitation_content') return;
      // Set by the refusal's error event, which the gateway sends before the acknowledgement.
      const refusal = this.lastRefusal as RefusalEvent | undefined;
      problems = refusal?.details?.fields ?? { '(form)': [ack.message ?? 'the answer does not fit the form'] };
    }
  }

  /** @throws GatewayError for a refused or failed request, with the gateway's message. */
  private async get(path: string): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.options.server), { headers: this.options.apiKey ? { 'x-api-key': this.options.apiKey } : {} });
    } catch (err) {
      throw new GatewayError(`cannot reach ${this.options.server}: ${(err as Error).message}`);
    }
    const body = (await response.json().catch(() => ({}))) as { message?: string };
    if (!response.ok) throw new GatewayError(`the gateway answered ${response.status}${body.message ? `: ${body.message}` : ''}`);
    return body;
  }
}
