import type { RunUsage } from '../events/execution-event.js';
import type { ChatMessage, ToolCallRequest, ToolSpec } from '../llm/chat-model.js';

/** About how many characters make a token in English text and JSON, for calls whose provider counts none. */
const CHARS_PER_TOKEN = 4;

/**
 * The tokens a run's model calls use, summed over the run. A call whose provider reported its
 * usage counts what it reported; one that reported none (the offline model, a server that
 * ignores `stream_options.include_usage`) is estimated from the characters sent and received,
 * and the total says it is estimated.
 */
export class UsageTally {
  private input: number;
  private output: number;
  private estimated: boolean;

  /** @param from what earlier attempts of the run counted (a continuation counts on). */
  constructor(from?: RunUsage) {
    this.input = from?.input_tokens ?? 0;
    this.output = from?.output_tokens ?? 0;
    this.estimated = from?.estimated === true;
  }

  /** Counts one model call: what its provider reported, or else an estimate from what went each way. */
  add(reported: { inputTokens: number; outputTokens: number } | undefined, sent: { messages: ChatMessage[]; tools: ToolSpec[] }, received: { text: string; toolCalls: ToolCallRequest[] }): void {
    if (reported) {
      this.input += reported.inputTokens;
      this.output += reported.outputTokens;
      return;
    }
    this.estimated = true;
    const sentChars = sent.messages.reduce((sum, m) => sum + m.content.length + (m.toolCalls ? JSON.stringify(m.toolCalls).length : 0), 0) + (sent.tools.length > 0 ? JSON.stringify(sent.tools).length : 0);
    const receivedChars = received.text.length + (received.toolCalls.length > 0 ? JSON.stringify(received.toolCalls).length : 0);
    this.input += Math.ceil(sentChars / CHARS_PER_TOKEN);
    this.output += Math.ceil(receivedChars / CHARS_PER_TOKEN);
  }

  total(): RunUsage {
    return { input_tokens: this.input, output_tokens: this.output, ...(this.estimated ? { estimated: true as const } : {}) };
  }
}
