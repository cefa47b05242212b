import { ApiError } from './api-error.js';

/** Deeper than request bodies may nest (the body parser refuses past 32 levels): nothing is skipped. */
const MAX_DEPTH = 64;

/**
 * The UTF-8 bytes of the text one message carries: every string in it, however its dialect
 * nests it (OpenAI `content` parts, AI SDK `parts`, A2A `parts` with text or data, AG-UI
 * `content`), keys and punctuation aside. The measure of DATAAGENT_MAX_MESSAGE_BYTES.
 */
export function messageBytes(message: unknown, depth = 0): number {
  if (typeof message === 'string') return Buffer.byteLength(message, 'utf8');
  if (message === null || typeof message !== 'object' || depth > MAX_DEPTH) return 0;
  let bytes = 0;
  for (const value of Array.isArray(message) ? message : Object.values(message)) bytes += messageBytes(value, depth + 1);
  return bytes;
}

/** 413 `message_too_large`: the error of a message over DATAAGENT_MAX_MESSAGE_BYTES, naming where it is. */
export function messageTooLarge(bytes: number, limit: number, field = 'message'): ApiError {
  return new ApiError(413, 'message_too_large', `${field} is ${bytes} bytes; the limit is ${limit}`, { limit, size: bytes, field });
}

/**
 * Holds every message a request brings (the new one and each of its history: OpenAI `messages`,
 * Responses `input`, AI SDK and AG-UI `messages`, an A2A message's parts) to the message limit,
 * so a history cannot carry what the newest message may not.
 * @param messages the request's list of messages, or one message; anything else is left to the dialect's own checks
 * @throws ApiError 413 `message_too_large` naming the first message over `limit` (`messages[3]`)
 */
export function holdMessagesToLimit(messages: unknown, field: string, limit: number): void {
  if (!Array.isArray(messages)) {
    const bytes = messageBytes(messages);
    if (bytes > limit) throw messageTooLarge(bytes, limit, field);
    return;
  }
  messages.forEach((message, i) => {
    const bytes = messageBytes(message);
    if (bytes > limit) throw messageTooLarge(bytes, limit, `${field}[${i}]`);
  });
}
