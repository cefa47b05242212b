import { fitToBytes, formatBytes, messageBytes } from '#core/llm/byte-budget.js';
import type { ChatMessage } from '#core/llm/chat-model.js';
import { toChatMessage } from '#core/session/message-records.js';
import type { MessageRecord, MessageStore } from '#core/session/session-store.js';

/** Most stored messages a run reads back, however small they are. */
const MAX_HISTORY_MESSAGES = 10_000;
/** Messages read from the store at a time, newest page first. */
const PAGE_SIZE = 200;
/** A message cut to fewer bytes than this says too little to be worth its place. */
const MIN_CUT_BYTES = 512;

/**
 * The conversation `runId` continues, read from the store newest page first and only as far back
 * as `maxBytes` of it reaches (never more than 10,000 messages), as model messages within
 * `maxBytes` (see {@link newestWithin}).
 */
export async function loadHistory(store: MessageStore, sessionId: string, runId: string, maxBytes: number): Promise<ChatMessage[]> {
  // Most sessions fit in one page: one query, no count.
  const first = await store.list(sessionId, { limit: PAGE_SIZE, offset: 0 });
  if (first.length < PAGE_SIZE) return newestWithin(historyBefore(first, runId), maxBytes);
  const total = await store.count(sessionId);
  let records: MessageRecord[] = [];
  for (let offset = total; offset > 0 && records.length < MAX_HISTORY_MESSAGES; ) {
    const limit = Math.min(PAGE_SIZE, offset);
    offset -= limit;
    records = [...(await store.list(sessionId, { limit, offset })), ...records];
    // Enough once the budget is full, this run's own message is in (it decides which later messages
    // to leave out), and the oldest page does not start inside a tool exchange.
    const full = historyBefore(records, runId).reduce((sum, m) => sum + messageBytes(m), 0) >= maxBytes;
    if (full && records[0]!.role !== 'tool' && records.some((r) => isInputOf(r, runId))) break;
  }
  return newestWithin(historyBefore(records, runId), maxBytes);
}

/**
 * The newest messages that fit in `maxBytes` (as {@link messageBytes} weighs them). An assistant
 * message with tool calls and the tool messages answering it are kept or dropped together, and a
 * tool message whose call is not there is dropped: OpenAI-compatible APIs reject a request with
 * either half alone. The newest exchange that does not fit whole is cut to fit what is left, each
 * text with a marker, when that leaves each message a useful part; everything older is dropped.
 */
export function newestWithin(messages: ChatMessage[], maxBytes: number): ChatMessage[] {
  const kept: ChatMessage[][] = [];
  let left = maxBytes;
  const exchanges = toolExchanges(messages);
  for (let i = exchanges.length - 1; i >= 0; i--) {
    const exchange = exchanges[i]!;
    const size = exchange.reduce((sum, m) => sum + messageBytes(m), 0);
    if (size <= left) {
      kept.push(exchange);
      left -= size;
      continue;
    }
    const cut = cutToFit(exchange, left, maxBytes);
    if (cut) kept.push(cut);
    break;
  }
  return kept.reverse().flat();
}

/** Messages grouped so that an assistant's tool calls and their answers form one group; orphan answers are left out. */
function toolExchanges(messages: ChatMessage[]): ChatMessage[][] {
  const groups: ChatMessage[][] = [];
  for (const message of messages) {
    if (message.role !== 'tool') {
      groups.push([message]);
      continue;
    }
    const group = groups.at(-1);
    if (group?.[0]!.toolCalls?.some((c) => c.id === message.toolCallId)) group.push(message);
  }
  return groups;
}

/** `exchange` with its texts cut so that it weighs at most `budget`, or undefined when too little would be left. */
function cutToFit(exchange: ChatMessage[], budget: number, maxBytes: number): ChatMessage[] | undefined {
  let left = budget - exchange.reduce((sum, m) => sum + messageBytes({ ...m, content: '' }), 0);
  if (left < MIN_CUT_BYTES * exchange.length) return undefined;
  const marker = ({ omitted, total }: { omitted: number; total: number }) =>
    `\n[… cut: ${formatBytes(omitted)} of ${formatBytes(total)} not shown; the conversation sent with each turn is limited to ${formatBytes(maxBytes)}]`;
  // Shortest first: short texts stay whole and the long ones share what remains.
  const bySize = exchange.map((_, i) => i).sort((a, b) => Buffer.byteLength(exchange[a]!.content) - Buffer.byteLength(exchange[b]!.content));
  const out = [...exchange];
  bySize.forEach((index, n) => {
    const message = exchange[index]!;
    const content = fitToBytes(message.content, Math.floor(left / (bySize.length - n)), marker);
    if (content !== message.content) out[index] = { ...message, content };
    left -= Buffer.byteLength(content);
  });
  return out;
}

/**
 * The conversation `runId` continues, as model messages: everything stored except this
 * run's own messages and the user messages of runs queued after it. Answers of earlier
 * runs stored after this run's user message (DATAAGENT_MULTITASK=enqueue) are kept.
 */
export function historyBefore(records: MessageRecord[], runId: string): ChatMessage[] {
  const own = records.findIndex((r) => isInputOf(r, runId));
  return records.filter((r, i) => r.runId !== runId && !(own !== -1 && i > own && r.role === 'user')).map(toChatMessage);
}

/** What a run starts from, stored before it runs: the person's message, or the results of the client's tools (role tool). */
function isInputOf(record: MessageRecord, runId: string): boolean {
  return record.runId === runId && (record.role === 'user' || record.role === 'tool');
}
