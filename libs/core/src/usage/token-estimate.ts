import { Tiktoken } from 'js-tiktoken/lite';
import type { ChatMessage, ToolCallRequest, ToolSpec } from '../llm/chat-model.js';

/** The tokenizers estimates use: o200k_base (GPT-4o and later, and the default), cl100k_base (GPT-4, GPT-3.5). */
export type TokenizerName = 'o200k_base' | 'cl100k_base';

/** Tokens OpenAI adds per message of a chat, and to prime the answer. */
const PER_MESSAGE = 3;
const PRIMING = 3;

const loaded = new Map<TokenizerName, Tiktoken>();

/**
 * A run of letters, or of punctuation and symbols, this long is counted, not encoded: the
 * tokenizer splits text into such runs, and byte-pair encoding takes time quadratic in a run's
 * length (8,000 letters without a break: 5 s; 32,000: 80 s), so a message of one long word or
 * one long line of dots would hold a worker's CPU. Such a run counts a token per character, at
 * least what it encodes to.
 */
const LONG_RUN = /[\p{L}\p{M}]{256,}|[^\s\p{L}\p{M}\p{N}]{256,}/gu;

/** Tokens of `text` under `encoder`, in time linear in its length (see LONG_RUN). */
export function tokenCount(encoder: Tiktoken, text: string): number {
  if (text === '') return 0;
  let long = 0;
  const rest = text.replace(LONG_RUN, (run) => {
    long += run.length;
    return ' ';
  });
  return long + (long > 0 && rest.trim() === '' ? 0 : encoder.encode(rest).length);
}

/**
 * The tokenizer of a model's family, by its id. Models of other providers (Claude, open
 * models) get o200k_base too: their own tokenizers are not published, and the figure is marked
 * estimated wherever it is used.
 */
export function tokenizerFor(modelId: string): TokenizerName {
  const name = modelId.slice(modelId.indexOf(':') + 1).toLowerCase();
  return /^(gpt-4(?!o|\.1|\.5)|gpt-3\.5|text-embedding-(ada|3))/.test(name) ? 'cl100k_base' : 'o200k_base';
}

/** Loaded on first use (the ranks are a few megabytes): a run whose provider reports usage never loads them. */
async function tokenizer(name: TokenizerName): Promise<Tiktoken> {
  let encoder = loaded.get(name);
  if (!encoder) {
    const ranks = name === 'cl100k_base' ? (await import('js-tiktoken/ranks/cl100k_base')).default : (await import('js-tiktoken/ranks/o200k_base')).default;
    encoder = new Tiktoken(ranks);
    loaded.set(name, encoder);
  }
  return encoder;
}

/** Tokens of one text under a model's family tokenizer. */
export async function countTokens(modelId: string, text: string): Promise<number> {
  if (text === '') return 0;
  return tokenCount(await tokenizer(tokenizerFor(modelId)), text);
}

/**
 * Counts of texts seen lately, by tokenizer and text: a run's every call sends the same system
 * prompt, tools and earlier messages again, and encoding them is most of an estimate's cost.
 */
const counted = new Map<string, number>();
const COUNTED_MAX = 4_096;

function countCached(encoder: Tiktoken, name: TokenizerName, text: string): number {
  if (text === '') return 0;
  const key = `${name}\u0000${text}`;
  const known = counted.get(key);
  if (known !== undefined) {
    // Most recently used last: the oldest goes first when the map is full.
    counted.delete(key);
    counted.set(key, known);
    return known;
  }
  const tokens = tokenCount(encoder, text);
  if (counted.size >= COUNTED_MAX) counted.delete(counted.keys().next().value!);
  counted.set(key, tokens);
  return tokens;
}

/** The input tokens of a chat request: each message's content, name and tool calls, the tools offered, and the framing OpenAI counts. */
export async function estimateInputTokens(modelId: string, messages: readonly ChatMessage[], tools: readonly ToolSpec[]): Promise<number> {
  const name = tokenizerFor(modelId);
  const encoder = await tokenizer(name);
  let total = PRIMING;
  for (const message of messages) {
    total += PER_MESSAGE + countCached(encoder, name, message.content);
    if (message.name) total += countCached(encoder, name, message.name);
    if (message.toolCalls?.length) total += countCached(encoder, name, JSON.stringify(message.toolCalls));
  }
  if (tools.length > 0) total += countCached(encoder, name, JSON.stringify(tools));
  return total;
}

/** The output tokens of an answer: its text and its tool calls. */
export async function estimateOutputTokens(modelId: string, text: string, toolCalls: readonly ToolCallRequest[]): Promise<number> {
  const encoder = await tokenizer(tokenizerFor(modelId));
  return tokenCount(encoder, text) + (toolCalls.length > 0 ? tokenCount(encoder, JSON.stringify(toolCalls)) : 0);
}
