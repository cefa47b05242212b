import { randomUUID } from 'node:crypto';
import type { ToolCallRequest } from '../../llm/chat-model.js';
import { ToolActionRecorder } from './tool-action-parser.js';
import { Step, TOOL_ACTION_TAG, ToolActionRecognizer } from './tool-action-recognizer.js';

/** `raw` is the tag exactly as the model wrote it (shown as text when native tool calls win). */
export type DetectorOutput = { type: 'text'; text: string } | { type: 'tool_call'; call: ToolCallRequest; raw: string };

export interface StreamingToolActionDetectorOptions {
  /** `enableToolActionParsing`: when false every chunk passes through as text. Default true. */
  enabled?: boolean;
  /** A candidate tag longer than this (in UTF-16 units) is released as text. Default 64 KiB. */
  maxTagLength?: number;
  /** Id for each detected call. Default `ta_<uuid>`; pass a run-scoped one to make ids replayable. */
  newId?: () => string;
}

export const DEFAULT_MAX_TAG_LENGTH = 64 * 1024;
const OPEN_LITERAL_LENGTH = 1 + TOOL_ACTION_TAG.length;

/**
 * Finds `<tool_action>` tags in a streamed model reply. Text is returned as soon as it cannot
 * be part of a tag: a chunk without '<' comes back unchanged, and only text from a '<' that may
 * still open a tag is held, until the tag completes (a `tool_call`) or proves not to be one
 * (text again). A malformed or unclosed tag never runs: it comes out as text.
 */
export class StreamingToolActionDetector {
  private readonly enabled: boolean;
  private readonly maxTagLength: number;
  private readonly newId: () => string;
  private readonly recorder = new ToolActionRecorder();
  private readonly recognizer = new ToolActionRecognizer(this.recorder);
  /** The held candidate, as pieces of earlier chunks (joined only when it resolves). */
  private held: string[] = [];
  private heldLength = 0;
  private holding = false;

  constructor(options: StreamingToolActionDetectorOptions = {}) {
    this.enabled = options.enabled ?? true;
    this.maxTagLength = options.maxTagLength ?? DEFAULT_MAX_TAG_LENGTH;
    this.newId = options.newId ?? (() => `ta_${randomUUID()}`);
  }

  /**
   * Feeds the next chunk of model text.
   *
   * @returns what can be emitted now, in order: text runs and completed tool calls.
   */
  push(chunk: string): DetectorOutput[] {
    if (chunk.length === 0) return [];
    if (!this.enabled) return [{ type: 'text', text: chunk }];
    if (this.holding) return this.scan(chunk, 0);
    const lt = chunk.indexOf('<');
    if (lt === -1) return [{ type: 'text', text: chunk }];
    return this.scan(chunk, lt);
  }

  /** Ends the stream: a tag still open is released as text, never executed. */
  end(): DetectorOutput[] {
    if (!this.holding) return [];
    const text = this.takeHeld();
    this.holding = false;
    return text === '' ? [] : [{ type: 'text', text }];
  }

  private scan(chunk: string, from: number): DetectorOutput[] {
    const out: DetectorOutput[] = [];
    const n = chunk.length;
    /** Text released from earlier chunks, to be emitted before `chunk[runStart..]`. */
    let released = '';
    /** Start of the current text run in this chunk. */
    let runStart = 0;
    /** Where the held candidate begins in this chunk (0 when it began in an earlier one). */
    let candidateStart = 0;
    let i = from;

    while (i < n) {
      if (!this.holding) {
        const lt = chunk.indexOf('<', i);
        if (lt === -1) break;
        this.holding = true;
        this.recognizer.reset();
        candidateStart = lt;
        i = lt + 1;
        continue;
      }
      const room = this.maxTagLength - this.heldLength - (i - candidateStart);
      if (room <= 0) {
        released += this.takeHeld();
        this.holding = false;
        continue;
      }
      i = this.recognizer.advance(chunk, i, room < n - i ? i + room : n);
      const step = this.recognizer.result;
      if (step === Step.Reject) {
        // Everything held is text; the rejected character is looked at afresh (it may be a '<').
        released += this.takeHeld();
        this.holding = false;
      } else if (step === Step.Nested) {
        const nestedStart = i - OPEN_LITERAL_LENGTH;
        if (nestedStart >= candidateStart) {
          released += this.takeHeld();
          candidateStart = nestedStart;
        } else {
          const held = this.takeHeld();
          const keep = held.length - (candidateStart - nestedStart);
          released += held.slice(0, keep);
          this.hold(held.slice(keep));
        }
        this.recognizer.resetAfterOpenLiteral();
      } else if (step === Step.Done) {
        const tagText = this.takeHeld() + chunk.slice(candidateStart, i);
        this.holding = false;
        const parsed = this.recorder.read(tagText);
        if (!parsed.ok) {
          released += tagText.slice(0, tagText.length - (i - candidateStart));
          continue;
        }
        const text = released + chunk.slice(runStart, candidateStart);
        if (text !== '') out.push({ type: 'text', text });
        out.push({ type: 'tool_call', call: { id: this.newId(), name: parsed.name, arguments: parsed.arguments }, raw: tagText });
        released = '';
        runStart = i;
      }
    }

    const textEnd = this.holding ? candidateStart : n;
    const text = released + (runStart === 0 && textEnd === n ? chunk : chunk.slice(runStart, textEnd));
    if (text !== '') out.push({ type: 'text', text });
    if (this.holding) this.hold(chunk.slice(candidateStart));
    return out;
  }

  private hold(piece: string): void {
    if (piece === '') return;
    this.held.push(piece);
    this.heldLength += piece.length;
  }

  private takeHeld(): string {
    if (this.heldLength === 0) return '';
    const text = this.held.length === 1 ? this.held[0]! : this.held.join('');
    this.held = [];
    this.heldLength = 0;
    return text;
  }
}

/** Splits a whole (non-streamed) reply into text and tool calls, as the streaming detector would. */
export function splitToolActions(text: string, options?: StreamingToolActionDetectorOptions): DetectorOutput[] {
  const detector = new StreamingToolActionDetector(options);
  return [...detector.push(text), ...detector.end()];
}
