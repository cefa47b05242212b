import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { McpMessageTooLargeError, refusalResponse } from './message-limits.js';
import { McpUnavailableError } from './mcp-errors.js';

/** Connection errors that mean the request never reached the server. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** A streamable HTTP request that failed before any answer: refused (it never arrived) or cut (it may have run). */
export class HttpConnectionError extends Error {
  constructor(
    message: string,
    /** The server was not reached at all, so the request had no effect. */
    readonly unreachable: boolean,
  ) {
    super(message);
    this.name = 'HttpConnectionError';
  }
}

/**
 * fetch for the SDK's streamable HTTP client transport that never leaves a call waiting on a
 * stream that is gone. The SDK reads a POST's `text/event-stream` answer and, when the stream
 * breaks or ends before the response and the server gave no event id to resume from, silently
 * drops it: the request then waits for its whole timeout. Here such a stream ends instead with a
 * JSON-RPC error (ConnectionClosed) for each request it still owed, so the call fails at once.
 * A fetch that fails outright becomes an {@link HttpConnectionError} that says whether the server
 * was reached. Over a `boundedFetch`, an answer too large to read fails its request with that refusal.
 */
export function droppedStreamFetch(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    let response: Response;
    try {
      response = await base(url, init);
    } catch (err) {
      // Aborted, or refused by a wrapper before anything was sent (a sign-in the server needs).
      if (init?.signal?.aborted || err instanceof McpUnavailableError) throw err;
      const code = causeCode(err);
      const unreachable = code !== undefined && UNREACHABLE.has(code);
      throw new HttpConnectionError(unreachable ? `cannot reach ${new URL(url).host} (${code})` : `the connection dropped before the server answered (${code ?? describe(err)})`, unreachable);
    }
    const owed = init?.method === 'POST' ? requestIds(init.body) : [];
    const type = response.headers.get('content-type') ?? '';
    if (owed.length === 0 || !response.body || !type.toLowerCase().startsWith('text/event-stream')) return response;
    return new Response(answerWhenDropped(response.body, owed), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/**
 * Passes an SSE stream through, noting which of `owed` it answered and whether it carried an
 * event id. If it breaks or ends with requests unanswered and nothing to resume from, it
 * closes with an error event for each of them. If it broke on an event too large to read
 * ({@link McpMessageTooLargeError}), each of them gets that refusal instead, resumable or not:
 * resuming would only send the same event again.
 */
export function answerWhenDropped(body: ReadableStream<Uint8Array>, owed: Array<string | number>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const unanswered = new Set(owed);
  let resumable = false;
  let partial = '';
  let data: string[] = [];
  const read = (text: string) => {
    const lines = (partial + text).split(/\r\n|\r|\n/);
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) settle(data.join('\n'));
        data = [];
      } else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      else if (line.startsWith('id:')) resumable = true; // the SDK resumes such a stream itself (Last-Event-ID)
    }
  };
  const settle = (json: string) => {
    try {
      const parsed = JSON.parse(json) as unknown;
      for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
        if (message && typeof message === 'object' && 'id' in message && ('result' in message || 'error' in message)) unanswered.delete((message as { id: string | number }).id);
      }
    } catch {
      /* not JSON-RPC: the SDK reports it */
    }
  };
  const owe = (controller: ReadableStreamDefaultController<Uint8Array>, why: string | McpMessageTooLargeError) => {
    for (const id of unanswered) {
      const error: JSONRPCMessage =
        why instanceof McpMessageTooLargeError
          ? refusalResponse(id, why)
          : { jsonrpc: '2.0', id, error: { code: ErrorCode.ConnectionClosed, message: `the server dropped the response stream before it answered (${why})` } };
      controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(error)}\n\n`));
    }
    controller.close();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (err) {
        if (err instanceof McpMessageTooLargeError) owe(controller, err);
        else if (unanswered.size > 0 && !resumable) owe(controller, describe(err));
        else controller.error(err);
        return;
      }
      if (chunk.done) {
        if (unanswered.size > 0 && !resumable) owe(controller, 'it ended');
        else controller.close();
        return;
      }
      read(decoder.decode(chunk.value, { stream: true }));
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** The ids of the requests (not notifications or responses) in a POST body. */
function requestIds(body: RequestInit['body']): Array<string | number> {
  if (typeof body !== 'string') return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    return (Array.isArray(parsed) ? parsed : [parsed])
      .filter((m): m is { id: string | number; method: string } => m && typeof m === 'object' && 'method' in m && 'id' in m && m.id !== undefined && m.id !== null)
      .map((m) => m.id);
  } catch {
    return [];
  }
}

function causeCode(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
}

function describe(err: unknown): string {
  const cause = (err as { cause?: unknown })?.cause;
  const text = err instanceof Error ? err.message || err.name : String(err);
  return cause instanceof Error && cause.message ? `${text}: ${cause.message}` : text;
}
