import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatMessage, ChatModel, ModelChunk, ModelRequest, ToolCallRequest, ToolSpec } from '#core/llm/chat-model.js';

export interface OfflineChatModelOptions {
  /** Pause between streamed chunks, so the UI shows streaming. Default 20; 0 in tests. */
  chunkDelayMs?: number;
}

/** Words per streamed chunk. */
const WORDS_PER_CHUNK = 3;
const ECHO_LIMIT = 200;

/**
 * The built-in model used when no LLM is configured: no network, same words for the same
 * conversation. It says what it is, acknowledges the last message and explains how to configure
 * a real model. For demos, "use tool NAME {json args}" with an offered tool makes it call that
 * tool natively (fresh call id each time), and a tool result that follows is summarised.
 * When `signal` fires it stops and throws an error named `AbortError`.
 */
export class OfflineChatModel implements ChatModel {
  readonly id = 'offline';
  private readonly chunkDelayMs: number;

  constructor(options: OfflineChatModelOptions = {}) {
    this.chunkDelayMs = options.chunkDelayMs ?? 20;
  }

  async *stream({ messages, tools, signal }: ModelRequest): AsyncIterable<ModelChunk> {
    const last = messages.at(-1);
    const call = last?.role === 'user' ? requestedToolCall(last.content, tools) : undefined;
    const text =
      last?.role === 'tool' ? summariseToolResult(last, messages)
      : call ? `(Offline model) Calling the tool \`${call.name}\` as you asked.`
      : answer(last?.role === 'user' ? last.content : undefined, tools);

    for (const [i, chunk] of chunked(text).entries()) {
      if (i > 0 && this.chunkDelayMs > 0) {
        try {
          await sleep(this.chunkDelayMs, undefined, { signal });
        } catch {
          throw abortError();
        }
      }
      if (signal.aborted) throw abortError();
      yield { type: 'text', text: chunk };
    }
    if (signal.aborted) throw abortError();
    if (call) {
      yield { type: 'tool_calls', calls: [call] };
      yield { type: 'finish', reason: 'tool_calls' };
    } else {
      yield { type: 'finish', reason: 'stop' };
    }
  }
}

function answer(userText: string | undefined, tools: ToolSpec[]): string {
  const lines: string[] = [];
  if (userText !== undefined && userText.trim() !== '') {
    const echo = userText.trim().replace(/\s+/g, ' ');
    const shown = echo.length > ECHO_LIMIT ? `${echo.slice(0, ECHO_LIMIT)}…` : echo;
    lines.push(`I'm DataAgent's offline model. I received your message: "${shown}"`);
  } else {
    lines.push(`I'm DataAgent's offline model.`);
  }
  lines.push(
    '',
    'No language model is configured, so I can only acknowledge messages, not think about them. To get real answers, set:',
    '- OPENAI_API_KEY: your OpenAI API key;',
    '- OPENAI_BASE_URL: the address of any OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp), e.g. http://127.0.0.1:11434/v1; no key needed then;',
    '- ANTHROPIC_API_KEY: your Anthropic API key, with DATAAGENT_MODEL=claude-… (or anthropic:claude-…);',
    '- DATAAGENT_MODEL: the model to use (default gpt-4o-mini).',
    'Then restart the workers.',
  );
  if (tools.length > 0) {
    const names = tools.slice(0, 5).map((t) => t.name);
    const more = tools.length > names.length ? `, and ${tools.length - names.length} more` : '';
    lines.push('', `To see a tool call, write "use tool ${names[0]}" (tools: ${names.join(', ')}${more}).`);
  }
  return lines.join('\n');
}

/** "use tool NAME", "call the tool NAME {…}": a native call when NAME is offered. */
function requestedToolCall(text: string, tools: ToolSpec[]): ToolCallRequest | undefined {
  const match = /\b(?:use|call|run)\s+(?:the\s+)?tool\s+[`"']?([A-Za-z0-9_.:-]+)/i.exec(text);
  if (!match) return undefined;
  const tool = tools.find((t) => t.name === match[1]);
  if (!tool) return undefined;
  const rest = text.slice(match.index + match[0].length);
  const open = rest.indexOf('{');
  const close = rest.lastIndexOf('}');
  let args: Record<string, unknown> = {};
  if (open >= 0 && close > open) {
    try {
      const parsed: unknown = JSON.parse(rest.slice(open, close + 1));
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
    } catch {
      // no usable arguments: call with none
    }
  }
  return { id: `call_${randomUUID()}`, name: tool.name, arguments: args };
}

function summariseToolResult(result: ChatMessage, messages: ChatMessage[]): string {
  const name =
    result.name ??
    messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === result.toolCallId)?.name ??
    'the tool';
  const content = result.content.trim();
  const shown = content.length > 500 ? `${content.slice(0, 500)}…` : content;
  return `(Offline model) \`${name}\` returned:\n${shown}\n\nA configured language model would interpret this result; I can only show it.`;
}

/** Groups of a few words, whitespace kept, so joining the chunks gives back the text. */
function chunked(text: string): string[] {
  const words = text.match(/\s*\S+/g) ?? [text];
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += WORDS_PER_CHUNK) chunks.push(words.slice(i, i + WORDS_PER_CHUNK).join(''));
  return chunks;
}

function abortError(): Error {
  return new DOMException('The offline model was stopped', 'AbortError');
}
