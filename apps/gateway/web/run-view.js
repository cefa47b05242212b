// @ts-check
/**
 * What the chat shows of a run, folded from its events (the README's Events table), and of the
 * stored history. Pure: no DOM and no network, so it is unit tested beside this file.
 *
 * @typedef {import('./events.js').EventDict} EventDict
 * @typedef {import('./events.js').ToolResultStatus} ToolResultStatus
 * @typedef {import('./run-view.js').Turn} Turn
 */

/**
 * Tool statuses a card shows as they are (every ToolResultStatus: the spec holds the two lists
 * together); anything else still running when the run ends is `cancelled`.
 * @type {Set<string>}
 */
const FINAL_TOOL_STATUSES = new Set(/** @satisfies {ToolResultStatus[]} */ (['success', 'error', 'timeout', 'rejected', 'cancelled', 'interrupted']));

/**
 * A run with nothing shown yet.
 * @param {string} runId
 * @param {string} sessionId
 * @returns {Turn}
 */
export function newTurn(runId, sessionId) {
  return { runId, sessionId, status: 'streaming', started: false, reason: null, lastSeq: 0, events: [], blocks: [], hitl: [], elicitations: [], usage: null };
}

/**
 * Adds one of the run's events to the turn.
 * @returns `applied`; `duplicate` for a seq already seen (a replay after a resume); `gap` when
 *   events before it are missing: the caller resumes after `turn.lastSeq` and drops this one.
 * @param {Turn} turn
 * @param {EventDict} event
 */
export function applyEvent(turn, event) {
  if (event.seq <= turn.lastSeq) return 'duplicate';
  if (event.seq > turn.lastSeq + 1) return 'gap';
  if (event.event_type === 'error' && event.error_code === 'worker_lost' && typeof event.resume_after_seq === 'number') {
    // Another worker redoes the step cut mid-way: what it had shown after resume_after_seq goes.
    const after = event.resume_after_seq;
    const kept = turn.events.filter((e) => e.seq <= after);
    Object.assign(turn, newTurn(turn.runId, turn.sessionId));
    for (const e of kept) fold(turn, e);
  }
  fold(turn, event);
  return 'applied';
}

/**
 * A turn rebuilt from events kept earlier (a reload mid-stream).
 * @param {string} runId
 * @param {string} sessionId
 * @param {EventDict[]} events
 */
export function foldEvents(runId, sessionId, events) {
  const turn = newTurn(runId, sessionId);
  for (const event of events) applyEvent(turn, event);
  return turn;
}

/** Approval questions still waiting for an answer, oldest first. */
export function pendingApprovals(turn) {
  if (turn.status !== 'streaming') return [];
  return turn.hitl.filter((h) => !h.answered);
}

/** Questions of MCP servers (elicitations) still waiting for the person's answer, oldest first. */
export function pendingElicitations(turn) {
  if (turn.status !== 'streaming') return [];
  return turn.elicitations.filter((q) => !q.answered);
}

/**
 * @param {Turn} turn
 * @param {EventDict} event
 */
function fold(turn, event) {
  turn.events.push(event);
  turn.lastSeq = event.seq;
  const last = turn.blocks.at(-1);
  switch (event.event_type) {
    case 'run_started':
      turn.started = true;
      break;
    case 'text':
      turn.started = true;
      if (!event.content) break;
      if (last?.kind === 'text') last.text += event.content;
      else turn.blocks.push({ kind: 'text', text: event.content });
      break;
    case 'tool_call':
      turn.started = true;
      turn.blocks.push({ kind: 'tool', id: event.tool_call_id, name: event.tool_name, args: event.tool_args ?? {}, status: 'running', result: undefined, content: undefined });
      break;
    case 'hitl_request': {
      const tool = findTool(turn, callIdOf(turn.runId, event.request_id)) ?? turn.blocks.findLast((b) => b.kind === 'tool' && b.status === 'running');
      if (tool) tool.awaitingApproval = true;
      turn.hitl.push({
        requestId: event.request_id,
        toolCallId: tool?.id ?? null,
        action: event.action_request ?? { name: '', args: {} },
        expiresAt: event.expires_at ?? null,
        answered: false,
      });
      break;
    }
    case 'elicitation_request': {
      const tool = findTool(turn, event.tool_call_id);
      if (tool) tool.awaitingInput = true;
      turn.elicitations.push({
        requestId: event.request_id,
        toolCallId: event.tool_call_id,
        server: event.server,
        mode: event.mode,
        message: event.message,
        schema: event.requested_schema ?? null,
        url: event.url ?? null,
        expiresAt: event.expires_at ?? null,
        answered: false,
        outcome: null,
      });
      break;
    }
    case 'elicitation': {
      const question = turn.elicitations.find((q) => q.requestId === event.request_id);
      if (!question) break;
      question.answered = true;
      question.outcome = { action: event.action, content: event.content ?? null, reason: event.reason ?? null };
      const tool = findTool(turn, question.toolCallId);
      if (tool) tool.awaitingInput = turn.elicitations.some((q) => q.toolCallId === tool.id && !q.answered);
      break;
    }
    case 'tool_result': {
      const tool = findTool(turn, event.tool_call_id);
      if (!tool) break;
      tool.status = event.status;
      tool.result = event.result;
      tool.content = event.content;
      tool.awaitingApproval = false;
      tool.awaitingInput = false;
      for (const h of turn.hitl) if (h.toolCallId === tool.id) h.answered = true;
      for (const q of turn.elicitations) if (q.toolCallId === tool.id) q.answered = true;
      break;
    }
    case 'file_operation':
      turn.blocks.push({ kind: 'diff', operation: event.operation, path: event.path, diff: event.diff ?? '', stats: event.stats ?? { additions: 0, deletions: 0 } });
      break;
    case 'todo_update': {
      const list = turn.blocks.find((b) => b.kind === 'todos');
      if (list) list.todos = event.todos ?? [];
      else turn.blocks.push({ kind: 'todos', todos: event.todos ?? [] });
      break;
    }
    case 'error': {
      const continues = event.error_code === 'worker_lost';
      turn.blocks.push({ kind: 'error', message: event.error, code: event.error_code ?? null, recoverable: event.recoverable === true, continues });
      if (!event.recoverable) turn.failed = true;
      break;
    }
    case 'usage': {
      const sum = turn.usage ?? { inputTokens: 0, outputTokens: 0, cost: null, currency: null, estimated: false };
      turn.usage = {
        inputTokens: sum.inputTokens + event.input_tokens,
        outputTokens: sum.outputTokens + event.output_tokens,
        cost: event.priced === false ? sum.cost : addDecimals(sum.cost ?? '0', event.cost),
        currency: event.priced === false ? sum.currency : event.currency,
        estimated: sum.estimated || event.estimated === true,
      };
      break;
    }
    case 'done':
      turn.status = event.cancelled ? 'cancelled' : turn.failed ? 'failed' : 'done';
      turn.reason = event.reason ?? null;
      if (event.usage) {
        const u = event.usage;
        turn.usage = { inputTokens: u.input_tokens, outputTokens: u.output_tokens, cost: u.cost ?? null, currency: u.currency ?? null, estimated: u.estimated === true };
      }
      for (const b of turn.blocks) {
        if (b.kind === 'tool' && !FINAL_TOOL_STATUSES.has(b.status)) b.status = 'cancelled';
        if (b.kind === 'tool') b.awaitingApproval = b.awaitingInput = false;
      }
      for (const h of turn.hitl) h.answered = true;
      for (const q of turn.elicitations) q.answered = true;
      break;
  }
}

/**
 * Two non-negative decimals added exactly (the costs of calls: 12 decimals each).
 * @param {string} a
 * @param {string} b
 */
function addDecimals(a, b) {
  const [aw, af = ''] = a.split('.');
  const [bw, bf = ''] = b.split('.');
  const digits = Math.max(af.length, bf.length);
  const sum = BigInt(aw + af.padEnd(digits, '0')) + BigInt(bw + bf.padEnd(digits, '0'));
  const text = sum.toString().padStart(digits + 1, '0');
  return digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/**
 * "1,234 tokens · 0.0023 USD" (cost to 4 decimals, ~ before estimated figures); null when nothing was counted.
 * @param {import('./run-view.js').TurnUsage | null} usage
 */
export function usageLine(usage) {
  if (!usage) return null;
  const approx = usage.estimated ? '~' : '';
  const tokens = `${approx}${(usage.inputTokens + usage.outputTokens).toLocaleString('en-US')} tokens`;
  if (!usage.cost || !usage.currency) return tokens;
  const [whole, fraction = ''] = usage.cost.split('.');
  return `${tokens} · ${approx}${whole}.${fraction.padEnd(4, '0').slice(0, 4)} ${usage.currency}`;
}

function findTool(turn, id) {
  return id == null ? undefined : turn.blocks.find((b) => b.kind === 'tool' && b.id === id);
}

/** Request ids are `{run_id}:{tool_call_id}:{args hash}`; null when one is not shaped so. */
function callIdOf(runId, requestId) {
  if (typeof requestId !== 'string' || !requestId.startsWith(`${runId}:`)) return null;
  const rest = requestId.slice(runId.length + 1);
  const end = rest.lastIndexOf(':');
  return end > 0 ? rest.slice(0, end) : rest;
}

/**
 * The stored history (oldest first) as what the chat lists: each user message, then the run's
 * answer as one finished turn with its text and tool calls. Messages of `liveRunIds` other than
 * the user's are left out: those runs are shown from their events instead.
 * @returns `[{kind: 'user', key, text, runId} | {kind: 'turn', key, turn}]`
 */
export function historyItems(messages, liveRunIds = new Set()) {
  const items = [];
  let turn = null;
  for (const m of messages) {
    if (m.role === 'user') {
      items.push({ kind: 'user', key: m.message_id, text: m.content, runId: m.run_id ?? null });
      turn = null;
      continue;
    }
    if (m.role !== 'assistant' && m.role !== 'tool') continue;
    if (m.run_id && liveRunIds.has(m.run_id)) continue;
    if (!turn || turn.runId !== m.run_id) {
      turn = { ...newTurn(m.run_id ?? '', m.session_id ?? ''), status: 'done', started: true };
      items.push({ kind: 'turn', key: `history-${m.message_id}`, turn });
    }
    const meta = m.metadata ?? {};
    if (m.role === 'assistant') {
      if (m.content) turn.blocks.push({ kind: 'text', text: m.content });
      for (const call of Array.isArray(meta.tool_calls) ? meta.tool_calls : []) {
        turn.blocks.push({ kind: 'tool', id: call.id, name: call.name, args: call.arguments ?? {}, status: 'cancelled', result: undefined, content: undefined });
      }
    } else {
      const tool = findTool(turn, meta.tool_call_id);
      const result = parseJson(m.content);
      if (tool) {
        tool.result = result;
        tool.status = result && typeof result === 'object' && result.success === false ? 'error' : 'success';
      }
    }
  }
  return items;
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A tool call's arguments in one short line: `path: notes.txt, content: "hello…"`. */
export function shortArgs(args, max = 80) {
  if (!args || typeof args !== 'object') return '';
  const parts = Object.entries(args).map(([key, value]) => `${key}: ${typeof value === 'string' ? value.replace(/\s+/g, ' ') : JSON.stringify(value)}`);
  const line = parts.join(', ');
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A unified diff's lines, each with how to show it: `add`, `del`, `hunk`, `meta` or `context`. */
export function diffLines(diff) {
  const lines = diff.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((text) => {
    if (text.startsWith('+++') || text.startsWith('---') || text.startsWith('Index:') || text.startsWith('===')) return { kind: 'meta', text };
    if (text.startsWith('@@')) return { kind: 'hunk', text };
    if (text.startsWith('+')) return { kind: 'add', text };
    if (text.startsWith('-')) return { kind: 'del', text };
    return { kind: 'context', text };
  });
}
