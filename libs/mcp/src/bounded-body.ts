import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpMessageTooLargeError } from './message-limits.js';

/** Which server a body comes from and the most bytes one of its messages may have. */
export interface MessageLimit {
  server: string;
  maxBytes: number;
}

/** Bytes of an oversized event kept for `onOversize`, to tell which request it answered. */
const HEAD_BYTES = 256;

/**
 * fetch for an MCP transport whose response bodies are read within `limit`: an event stream one
 * event at a time ({@link boundedEventStream}; `onOversizedEvent` hears of an event it dropped),
 * anything else whole ({@link boundedBody}). Nothing past the limit is buffered, let alone parsed.
 */
export function boundedFetch(base: FetchLike, limit: MessageLimit, onOversizedEvent?: (dataHead: string) => void): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (!response.body) return response;
    const events = (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
    const declared = Number(response.headers.get('content-length') ?? undefined);
    const body = events ? boundedEventStream(response.body, limit, onOversizedEvent) : boundedBody(response.body, limit, Number.isFinite(declared) ? declared : undefined);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/**
 * Passes a response body through until it passes `limit.maxBytes`; then cancels it (the server
 * stops sending, the socket is released) and errors with {@link McpMessageTooLargeError}, so a
 * reader such as `response.json()` rejects before it ever parses. For a body that is one message
 * (a JSON answer, an error page).
 */
export function boundedBody(body: ReadableStream<Uint8Array>, limit: MessageLimit, declaredBytes?: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let size = 0;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      // A Content-Length past the limit fails before the first byte is read.
      if (declaredBytes !== undefined && declaredBytes > limit.maxBytes) {
        void reader.cancel().catch(() => undefined);
        controller.error(new McpMessageTooLargeError(limit.server, limit.maxBytes));
      }
    },
    async pull(controller) {
      const chunk = await reader.read();
      if (chunk.done) return controller.close();
      size += chunk.value.byteLength;
      if (size > limit.maxBytes) {
        void reader.cancel().catch(() => undefined);
        return controller.error(new McpMessageTooLargeError(limit.server, limit.maxBytes));
      }
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * Passes a `text/event-stream` body through one whole event at a time, never holding more than
 * `limit.maxBytes` of one event. An event that passes the cap is not passed on: the events before
 * it are, then `onOversize` gets the first bytes of its data, the body is cancelled, and the
 * stream errors with {@link McpMessageTooLargeError}. Whole events only, so the SDK's parser never
 * buffers part of an event that will not come. Lines end with LF, CRLF or CR; an empty line ends
 * an event.
 */
export function boundedEventStream(body: ReadableStream<Uint8Array>, limit: MessageLimit, onOversize?: (dataHead: string) => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  /** The current event's bytes so far, as they came. */
  let parts: Uint8Array[] = [];
  let size = 0;
  /** Bytes of the current line so far, its line end not counted: 0 at a line end means an empty line. */
  let lineBytes = 0;
  /** The previous chunk ended with a CR, so an LF first in this one belongs to that line end. */
  let afterCR = false;
  let failed: McpMessageTooLargeError | undefined;

  /** Splits `chunk` at line ends: the events it completes, whole, and whether the event it is in passed the cap. */
  const feed = (chunk: Uint8Array): { events: Uint8Array[]; oversize: boolean } => {
    const events: Uint8Array[] = [];
    let from = 0;
    let at = 0;
    // The LF of a CRLF cut in two is passed on, with whatever follows it.
    if (afterCR && chunk[0] === 0x0a) at = 1;
    afterCR = false;
    // Where the next LF and CR are, each looked up once per pass over the chunk (-1: none left).
    let lf = -2;
    let cr = -2;
    while (at < chunk.length) {
      if (lf !== -1 && lf < at) lf = chunk.indexOf(0x0a, at);
      if (cr !== -1 && cr < at) cr = chunk.indexOf(0x0d, at);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) {
        lineBytes += chunk.length - at;
        break;
      }
      const blank = lineBytes + end - at === 0;
      lineBytes = 0;
      at = end + 1;
      if (chunk[end] === 0x0d) {
        if (at === chunk.length) afterCR = true;
        else if (chunk[at] === 0x0a) at++;
      }
      if (!blank) continue;
      parts.push(chunk.subarray(from, at));
      size += at - from;
      from = at;
      if (size > limit.maxBytes) return { events, oversize: true };
      events.push(concat(parts, size));
      parts = [];
      size = 0;
    }
    if (from < chunk.length) {
      parts.push(chunk.subarray(from));
      size += chunk.length - from;
    }
    return { events, oversize: size > limit.maxBytes };
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (failed) return controller.error(failed);
      for (;;) {
        const chunk = await reader.read();
        // An unfinished event at the end is never dispatched (SSE): nothing to pass on.
        if (chunk.done) return controller.close();
        const { events, oversize } = feed(chunk.value);
        for (const event of events) controller.enqueue(event);
        if (oversize) {
          failed = new McpMessageTooLargeError(limit.server, limit.maxBytes);
          const head = dataHead(parts);
          parts = [];
          void reader.cancel().catch(() => undefined);
          onOversize?.(head);
          // Erroring drops what is queued: the events before this one are read first.
          if (events.length === 0) controller.error(failed);
          return;
        }
        if (events.length > 0) return;
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** What follows the first `data:` in an event's first bytes (its JSON-RPC message begins there). */
function dataHead(parts: Uint8Array[]): string {
  const head: Uint8Array[] = [];
  let size = 0;
  for (const part of parts) {
    if (size >= HEAD_BYTES) break;
    head.push(part.subarray(0, HEAD_BYTES - size));
    size += head.at(-1)!.byteLength;
  }
  const text = new TextDecoder().decode(concat(head, size));
  const data = /(?:^|[\r\n])data: ?/.exec(text);
  return data ? text.slice(data.index + data[0].length) : '';
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}
