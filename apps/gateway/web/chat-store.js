/**
 * The chat tab's state and its traffic: sessions over REST, runs over the Socket.IO namespace
 * /chat. Components read it and call its methods; it calls `onChange` after every change.
 *
 * A run is shown from its events (seq-deduplicated, so replays are harmless). The open session
 * and the events of its streaming run are kept in sessionStorage: a reload rebuilds the answer
 * from them and resumes after the last seq, so nothing is missing and nothing shown twice.
 */
import { io } from '/socket.io/socket.io.esm.min.js';
import { api, ApiFailure, socketFailure, storedKey } from './api.js';
import { applyEvent, foldEvents, historyItems, newTurn, pendingApprovals, pendingElicitations } from './run-view.js';

/** Messages of history loaded at a time (the newest first, older ones on request). */
const HISTORY_PAGE = 20;
const SESSION_STORAGE = 'dataagent.session';
const ACTIVE_RUN_STORAGE = 'dataagent.activeRun';

/** HTTP statuses of a refused message worth sending again as it is. */
const RETRYABLE = new Set([409, 429, 500, 502, 503, 504]);

let counter = 0;
const localKey = () => `local-${Date.now().toString(36)}-${++counter}`;

export class ChatStore {
  sessions = [];
  sessionsError = null;
  /** The open session; null for a new chat (the first message creates it). */
  sessionId = null;
  history = { messages: [], offset: 0, total: 0, loading: false, error: null };
  /** Messages sent from this page into the open session: `{key, text, runId, failure}`. */
  local = [];
  /** Every run this page follows or followed, by run id. */
  runs = new Map();
  connected = false;
  /** Set once connected: a later disconnect is shown as such until the reconnect. */
  wasConnected = false;
  connectionError = null;
  /**
   * The last gateway error event per error_code: a refused message's ack names the code only.
   * @type {Map<string, Pick<import('./events.js').ErrorEventBody, 'error' | 'recoverable' | 'details'>>}
   */
  gatewayErrors = new Map();
  persistQueued = false;

  /**
   * @param {{ onChange: () => void, onUserEvent: (event: object) => void, onAuthFailure: (failure: ApiFailure) => void }} hooks
   */
  constructor(hooks) {
    this.hooks = hooks;
  }

  /** Connects and reopens the session this tab had open (after a reload, mid-stream too). */
  start() {
    const key = storedKey();
    this.socket = io('/chat', { auth: key ? { apiKey: key } : {}, transports: ['websocket'] });
    this.socket.on('connect', () => {
      this.connected = true;
      this.connectionError = null;
      // After a drop, the runs still streaming continue from what was received.
      if (this.wasConnected) for (const turn of this.runs.values()) if (turn.status === 'streaming') void this.resumeRun(turn);
      this.wasConnected = true;
      this.changed();
    });
    this.socket.on('disconnect', (reason) => {
      this.connected = false;
      // The gateway closed it (a slow consumer): Socket.IO does not reconnect on its own then.
      if (reason === 'io server disconnect') this.socket.connect();
      this.changed();
    });
    this.socket.on('connect_error', (err) => {
      const failure = socketFailure(err);
      if (failure.status === 401) {
        this.socket.disconnect();
        this.hooks.onAuthFailure(failure);
        return;
      }
      this.connectionError = failure.message;
      this.changed();
    });
    this.socket.on('event', (event) => this.onEvent(event));
    void this.refreshSessions();
    const open = sessionStorage.getItem(SESSION_STORAGE);
    if (open) void this.openSession(open);
  }

  stop() {
    this.socket?.removeAllListeners();
    this.socket?.disconnect();
  }

  changed() {
    this.hooks.onChange();
  }

  // -------------------------------------------------------------------------------------------
  // Sessions

  async refreshSessions() {
    try {
      const page = await api('GET', '/sessions?limit=100&offset=0');
      this.sessions = page.sessions;
      this.sessionsError = null;
    } catch (err) {
      this.sessionsError = err.message;
    }
    this.changed();
  }

  /** An empty conversation: the next message starts a new session. */
  newChat() {
    this.sessionId = null;
    sessionStorage.removeItem(SESSION_STORAGE);
    this.local = [];
    this.history = { messages: [], offset: 0, total: 0, loading: false, error: null };
    this.changed();
  }

  /** Shows a session: its newest page of history, and its run if one is still going. */
  async openSession(sessionId) {
    this.sessionId = sessionId;
    sessionStorage.setItem(SESSION_STORAGE, sessionId);
    this.local = [];
    this.history = { messages: [], offset: 0, total: 0, loading: true, error: null };
    this.changed();
    try {
      const { message_count: count } = await api('GET', `/sessions/${encodeURIComponent(sessionId)}`);
      const offset = Math.max(0, count - HISTORY_PAGE);
      const page = await api('GET', `/sessions/${encodeURIComponent(sessionId)}/messages?limit=${HISTORY_PAGE}&offset=${offset}`);
      if (this.sessionId !== sessionId) return;
      this.history = { messages: page.messages, offset, total: page.total, loading: false, error: null };
    } catch (err) {
      if (this.sessionId !== sessionId) return;
      if (err instanceof ApiFailure && err.status === 404) {
        this.forgetActiveRun(sessionId);
        this.newChat();
        void this.refreshSessions();
        return;
      }
      this.history = { ...this.history, loading: false, error: err.message };
    }
    this.changed();
    await this.followSession(sessionId);
  }

  /** The page of history before the oldest message shown. */
  async loadOlder() {
    const { offset } = this.history;
    const sessionId = this.sessionId;
    if (!sessionId || offset === 0 || this.history.loading) return;
    const from = Math.max(0, offset - HISTORY_PAGE);
    this.history = { ...this.history, loading: true };
    this.changed();
    try {
      const page = await api('GET', `/sessions/${encodeURIComponent(sessionId)}/messages?limit=${offset - from}&offset=${from}`);
      if (this.sessionId !== sessionId) return;
      this.history = { messages: [...page.messages, ...this.history.messages], offset: from, total: page.total, loading: false, error: null };
    } catch (err) {
      this.history = { ...this.history, loading: false, error: err.message };
    }
    this.changed();
  }

  /** @throws ApiFailure when the gateway refuses (the caller shows it). */
  async rename(sessionId, title) {
    await api('PATCH', `/sessions/${encodeURIComponent(sessionId)}`, { title });
    await this.refreshSessions();
  }

  /** @throws ApiFailure when the gateway refuses (the caller shows it). */
  async remove(sessionId) {
    await api('DELETE', `/sessions/${encodeURIComponent(sessionId)}`);
    this.forgetActiveRun(sessionId);
    for (const [runId, turn] of this.runs) if (turn.sessionId === sessionId) this.runs.delete(runId);
    if (this.sessionId === sessionId) this.newChat();
    await this.refreshSessions();
  }

  // -------------------------------------------------------------------------------------------
  // Runs

  /** What the conversation lists, oldest first: history, then what was sent from this page. */
  items() {
    const live = [...this.runs.values()].filter((t) => t.sessionId === this.sessionId && this.sessionId !== null);
    const liveIds = new Set(live.map((t) => t.runId));
    const placed = new Set();
    const out = [];
    const placeTurn = (runId) => {
      if (!runId || placed.has(runId) || !this.runs.has(runId)) return;
      placed.add(runId);
      out.push({ kind: 'turn', key: runId, turn: this.runs.get(runId) });
    };
    for (const item of historyItems(this.history.messages, liveIds)) {
      out.push(item);
      if (item.kind === 'user' && liveIds.has(item.runId)) placeTurn(item.runId);
    }
    for (const entry of this.local) {
      out.push({ kind: 'user', key: entry.key, text: entry.text, runId: entry.runId });
      if (entry.failure) out.push({ kind: 'failure', key: `${entry.key}-failure`, entry });
      placeTurn(entry.runId);
    }
    for (const turn of live) placeTurn(turn.runId);
    return out;
  }

  /** The open session's run that is still streaming, if any. */
  streamingTurn() {
    if (!this.sessionId) return null;
    return [...this.runs.values()].find((t) => t.sessionId === this.sessionId && t.status === 'streaming') ?? null;
  }

  /** The oldest approval question of the open session still unanswered, with its run. */
  pendingApproval() {
    for (const turn of this.runs.values()) {
      if (turn.sessionId !== this.sessionId) continue;
      const [first] = pendingApprovals(turn);
      if (first) return { turn, request: first };
    }
    return null;
  }

  /** The oldest question of an MCP server in the open session still unanswered, with its run. */
  pendingElicitation() {
    for (const turn of this.runs.values()) {
      if (turn.sessionId !== this.sessionId) continue;
      const [first] = pendingElicitations(turn);
      if (first) return { turn, question: first };
    }
    return null;
  }

  /** Sends a chat message into the open session (or a new one). */
  async send(text) {
    const entry = { key: localKey(), text, runId: null, failure: null };
    this.local.push(entry);
    this.changed();
    await this.submit(entry);
  }

  /** Sends a message again: one the gateway refused, or the question of a run that failed. */
  async retry(entry) {
    entry.failure = null;
    this.changed();
    await this.submit(entry);
  }

  /** Asks the question of a failed run once more, as a new message. */
  async retryRun(turn) {
    const asked = this.items().find((i) => i.kind === 'user' && i.runId === turn.runId);
    if (asked) await this.send(asked.text);
  }

  async submit(entry) {
    const payload = { message: entry.text, ...(this.sessionId ? { session_id: this.sessionId } : {}) };
    const ack = await this.emit('chat', payload);
    if (!ack.ok) {
      entry.failure = this.refusal(ack.error_code);
      this.changed();
      return;
    }
    entry.runId = ack.run_id;
    if (!this.runs.has(ack.run_id)) this.runs.set(ack.run_id, newTurn(ack.run_id, ack.session_id));
    if (this.sessionId === null) {
      this.sessionId = ack.session_id;
      sessionStorage.setItem(SESSION_STORAGE, ack.session_id);
    }
    this.persist();
    this.changed();
    void this.refreshSessions();
  }

  /** Cancels the open session's runs; each ends with its done event. */
  async cancel() {
    if (!this.sessionId) return;
    await this.emit('cancel', { session_id: this.sessionId });
  }

  /** Answers an approval question: `approve`, `reject` or `approve_all` (this session, from now on). */
  async decide(request, decision) {
    request.answered = true;
    this.changed();
    const ack = await this.emit('hitl_decision', { request_id: request.requestId, decision });
    // Asked again unless the answer arrived or the question is settled anyway (decided elsewhere, expired).
    if (!ack.ok && !['hitl_already_decided', 'hitl_request_not_found'].includes(ack.error_code)) {
      request.answered = false;
      this.changed();
    }
  }

  /**
   * Answers an MCP server's question: `accept` (a form: with its content), `decline` or `cancel`.
   * A form the gateway refuses stays open with its fields' problems shown.
   */
  async answerElicitation(question, action, content) {
    question.sending = true;
    question.error = null;
    question.problems = {};
    this.changed();
    const ack = await this.emit('elicitation_answer', { request_id: question.requestId, action, ...(content ? { content } : {}) });
    question.sending = false;
    // Settled: answered now, or elsewhere, or expired (its elicitation event says how it ended).
    if (ack.ok || ['elicitation_already_answered', 'elicitation_request_not_found'].includes(ack.error_code)) {
      question.answered = true;
    } else {
      const refusal = this.gatewayErrors.get(ack.error_code);
      question.error = refusal?.error ?? `The gateway refused the answer (${ack.error_code})`;
      question.problems = refusal?.details?.fields ?? {};
    }
    this.changed();
  }

  /** A message over the socket with its acknowledgement; `{ok: false, error_code}` when it never got one. */
  async emit(type, payload) {
    try {
      return await this.socket.timeout(30_000).emitWithAck('message', { type, payload });
    } catch {
      this.gatewayErrors.set('no_answer', { error: 'The gateway did not answer in time; check the connection and retry', recoverable: true, details: {} });
      return { ok: false, error_code: 'no_answer' };
    }
  }

  /** How a refused message is shown: the gateway's error event for it (sent just before the ack). */
  refusal(errorCode) {
    const event = this.gatewayErrors.get(errorCode);
    const status = event?.details?.status;
    return {
      code: errorCode,
      message: event?.error ?? `The gateway refused the message (${errorCode})`,
      retryable: event?.recoverable !== false && (status === undefined || RETRYABLE.has(status)),
    };
  }

  /** @param {import('./events.js').SocketEvent} event */
  onEvent(event) {
    if (event.event_type === 'mcp_config_changed') {
      this.hooks.onUserEvent(event);
      return;
    }
    // The gateway's own events (seq 0) are not part of any run's log.
    if (!event.seq) {
      if (event.event_type === 'error') this.gatewayErrors.set(event.error_code, event);
      if (event.error_code === 'stream_failed') for (const turn of this.runs.values()) if (turn.status === 'streaming') void this.resumeRun(turn);
      return;
    }
    let turn = this.runs.get(event.run_id);
    if (!turn) {
      turn = newTurn(event.run_id, event.session_id);
      this.runs.set(event.run_id, turn);
    }
    const outcome = applyEvent(turn, event);
    if (outcome === 'gap') void this.resumeRun(turn);
    if (outcome !== 'applied') return;
    if (turn.sessionId === this.sessionId) this.persist();
    if (turn.status !== 'streaming') {
      this.forgetActiveRun(turn.sessionId, turn.runId);
      void this.refreshSessions();
    }
    this.changed();
  }

  /** Follows a run again from the last event shown (after a reconnect or a gap). */
  async resumeRun(turn) {
    if (turn.resuming) return;
    turn.resuming = true;
    try {
      const ack = await this.emit('resume', { session_id: turn.sessionId, run_id: turn.runId, after_seq: turn.lastSeq });
      // Gone (its session deleted, or kept from another user's sign-in): the history shows what is left.
      if (!ack.ok && ack.error_code === 'run_not_found') {
        this.runs.delete(turn.runId);
        this.forgetActiveRun(turn.sessionId, turn.runId);
        this.changed();
      }
    } finally {
      turn.resuming = false;
    }
  }

  /** Follows the open session's run: the one kept before a reload, else whichever is active. */
  async followSession(sessionId) {
    const kept = readActiveRun();
    if (kept && kept.session_id === sessionId && !this.runs.has(kept.run_id)) {
      this.runs.set(kept.run_id, foldEvents(kept.run_id, sessionId, kept.events ?? []));
      this.changed();
    }
    const streaming = [...this.runs.values()].filter((t) => t.sessionId === sessionId && t.status === 'streaming');
    if (streaming.length > 0) {
      for (const turn of streaming) await this.resumeRun(turn);
      return;
    }
    // Without run_id the gateway follows the session's active run, or answers no_active_run.
    const ack = await this.emit('resume', { session_id: sessionId, after_seq: 0 });
    if (ack.ok && !this.runs.has(ack.run_id)) {
      this.runs.set(ack.run_id, newTurn(ack.run_id, sessionId));
      this.changed();
    }
  }

  /** Keeps the open session's streaming run in sessionStorage (once per burst of events). */
  persist() {
    if (this.persistQueued) return;
    this.persistQueued = true;
    queueMicrotask(() => {
      this.persistQueued = false;
      const turn = this.streamingTurn();
      if (!turn) return;
      const kept = { session_id: turn.sessionId, run_id: turn.runId, last_seq: turn.lastSeq, events: turn.events };
      try {
        sessionStorage.setItem(ACTIVE_RUN_STORAGE, JSON.stringify(kept));
      } catch {
        // Too large for the storage: a reload then replays the run from its start.
        sessionStorage.setItem(ACTIVE_RUN_STORAGE, JSON.stringify({ ...kept, last_seq: 0, events: [] }));
      }
    });
  }

  forgetActiveRun(sessionId, runId) {
    const kept = readActiveRun();
    if (kept && kept.session_id === sessionId && (runId === undefined || kept.run_id === runId)) sessionStorage.removeItem(ACTIVE_RUN_STORAGE);
  }
}

function readActiveRun() {
  try {
    const kept = JSON.parse(sessionStorage.getItem(ACTIVE_RUN_STORAGE) ?? 'null');
    return kept && typeof kept.run_id === 'string' && typeof kept.session_id === 'string' ? kept : null;
  } catch {
    return null;
  }
}
