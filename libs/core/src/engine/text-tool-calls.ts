import { parseJsonToolCall } from '../tools/text-calls/json-tool-call.js';
import { StreamingToolActionDetector, type DetectorOutput } from '../tools/text-calls/streaming-tool-action-detector.js';

export type TurnSegment = DetectorOutput;

export interface TextToolCallOptions {
  /** `<tool_action>` tags (enableToolActionParsing). */
  parseTags: boolean;
  /** The whole-reply JSON form {"response", "tool_call"}, which models prompted to answer in JSON use. */
  parseJson: boolean;
  newId: () => string;
}

/**
 * Splits one model turn's streamed text into what the client sees now and the tool calls
 * written as text. Text before the first tag goes out at once; a tag and everything after
 * it wait for the end of the turn, because native tool calls (which arrive last) win over
 * tags, and text after a tag must follow the tool's result. A reply that opens with `{` or
 * a code fence may be the JSON form and is held whole.
 */
export class TextToolCalls {
  private readonly detector: StreamingToolActionDetector;
  private mode: 'undecided' | 'json' | 'stream' = 'undecided';
  private held = '';
  private readonly queued: TurnSegment[] = [];

  constructor(private readonly options: TextToolCallOptions) {
    this.detector = new StreamingToolActionDetector({ enabled: options.parseTags, newId: options.newId });
    if (!options.parseJson) this.mode = 'stream';
  }

  /** Feeds a chunk; returns the text to show now ('' when none). */
  push(chunk: string): string {
    if (this.mode === 'undecided') {
      this.held += chunk;
      const first = this.held.trimStart()[0];
      if (first === undefined) return '';
      this.mode = first === '{' || first === '`' ? 'json' : 'stream';
      if (this.mode === 'json') return '';
      chunk = this.held;
      this.held = '';
    }
    if (this.mode === 'json') {
      this.held += chunk;
      return '';
    }
    return this.take(this.detector.push(chunk));
  }

  /**
   * Ends the turn. Returns the rest of the turn in order; with `nativeCalls` every tag is
   * plain text.
   */
  end(nativeCalls: boolean): TurnSegment[] {
    if (this.mode !== 'stream') {
      const text = this.held;
      this.held = '';
      const json = !nativeCalls && this.mode === 'json' ? parseJsonToolCall(text, this.options.newId) : null;
      if (json?.call) return [...(json.response ? [{ type: 'text' as const, text: json.response }] : []), { type: 'tool_call', call: json.call, raw: text }];
      this.mode = 'stream';
      const now = this.take(this.detector.push(text));
      if (now) this.queued.unshift({ type: 'text', text: now });
    }
    const tail = this.take(this.detector.end());
    if (tail) this.queued.push({ type: 'text', text: tail });
    const rest = this.queued.splice(0);
    return nativeCalls ? rest.map((s) => ({ type: 'text' as const, text: s.type === 'text' ? s.text : s.raw })) : rest;
  }

  private take(outputs: DetectorOutput[]): string {
    let now = '';
    for (const out of outputs) {
      if (this.queued.length === 0 && out.type === 'text') now += out.text;
      else this.queued.push(out);
    }
    return now;
  }
}
