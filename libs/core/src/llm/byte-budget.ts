import type { ChatMessage } from './chat-model.js';

/** What a cut left out, for the marker that replaces it. */
export interface Cut {
  /** UTF-8 bytes not shown. */
  omitted: number;
  /** UTF-8 bytes of the whole text. */
  total: number;
}

/** Room kept for the marker's numbers, which may print a little longer than when it was measured. */
const MARKER_SLACK = 16;

/**
 * `text` if it takes at most `maxBytes` in UTF-8; otherwise its head, cut on a character boundary,
 * followed by `marker(cut)`, the two together within `maxBytes` (unless the marker alone is longer).
 */
export function fitToBytes(text: string, maxBytes: number, marker: (cut: Cut) => string): string {
  const total = Buffer.byteLength(text);
  if (total <= maxBytes) return text;
  const room = maxBytes - Buffer.byteLength(marker({ omitted: total, total })) - MARKER_SLACK;
  const head = utf8Head(text, Math.max(0, room));
  return head + marker({ omitted: total - Buffer.byteLength(head), total });
}

/** The longest prefix of `text` that takes at most `maxBytes` in UTF-8, never half a character. */
export function utf8Head(text: string, maxBytes: number): string {
  // Every UTF-16 unit takes at least one byte, so the first maxBytes units hold enough.
  const bytes = Buffer.from(text.slice(0, maxBytes), 'utf8').subarray(0, maxBytes);
  // Streaming decode holds back a trailing incomplete sequence instead of emitting U+FFFD.
  return new TextDecoder().decode(bytes, { stream: true });
}

/** `512 bytes`, `9.5 KB`, `10.0 MB` (KB = 1024 bytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** What a message weighs in a prompt: its text, tool calls and name, in UTF-8 bytes. */
export function messageBytes(message: ChatMessage): number {
  return (
    Buffer.byteLength(message.content) +
    (message.toolCalls?.length ? Buffer.byteLength(JSON.stringify(message.toolCalls)) : 0) +
    (message.name ? Buffer.byteLength(message.name) : 0)
  );
}
