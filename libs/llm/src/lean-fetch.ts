import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Agent, interceptors, request, type Dispatcher } from 'undici';

/** Keep-alive connections shared by every model of the process; redirects followed as fetch does. */
const dispatcher: Dispatcher = new Agent().compose(interceptors.redirect({ maxRedirections: 20 }));

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A `fetch` for the openai SDK (its `fetch` option) on undici's `request`. Node's own fetch
 * passes each network read of a streamed answer through several layers of streams; this one
 * hands the reads straight to a `ReadableStream`, which takes about a further fifth off the
 * CPU per chunk when every chunk is a read of its own (bench/llm-stream-bench.ts).
 *
 * It behaves as fetch does where the SDK can tell: failures reject with `TypeError('fetch
 * failed')` whose `cause` is the network error, an abort rejects with the signal's reason and
 * ends a body being read with an error, redirects are followed, a gzip, deflate or brotli body is
 * decoded. A `Request` object or a body other than a string or bytes goes to the global fetch.
 */
export async function leanFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const body = init.body;
  if (input instanceof Request || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array))) return fetch(input, init);
  const signal = init.signal ?? undefined;
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => {
    headers[name] = value;
  });
  let answer: Dispatcher.ResponseData;
  try {
    answer = await request(input, { dispatcher, method: (init.method ?? 'GET') as Dispatcher.HttpMethod, headers, body: body ?? undefined, signal });
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw new TypeError('fetch failed', { cause: err });
  }
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (Array.isArray(value)) for (const item of value) responseHeaders.append(name, item);
    else if (value !== undefined) responseHeaders.set(name, value);
  }
  if (NULL_BODY_STATUSES.has(answer.statusCode)) {
    await answer.body.dump();
    return new Response(null, { status: answer.statusCode, headers: responseHeaders });
  }
  return new Response(webStream(decoded(answer.body, responseHeaders)), { status: answer.statusCode, headers: responseHeaders });
}

/** The body with its content-encoding undone (servers should send none: no Accept-Encoding goes out). */
function decoded(body: Readable, headers: Headers): Readable {
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip()
    : encoding === 'deflate' ? createInflate()
    : encoding === 'br' ? createBrotliDecompress()
    : undefined;
  if (!decoder) return body;
  headers.delete('content-encoding');
  headers.delete('content-length');
  body.on('error', (err) => decoder.destroy(err));
  return body.pipe(decoder);
}

/** A byte stream fed by `body`'s data events, pausing `body` while the reader is behind. */
function webStream(body: Readable): ReadableStream<Uint8Array> {
  let open = true;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        body.on('data', (chunk: Buffer) => {
          if (!open) return;
          controller.enqueue(chunk);
          if ((controller.desiredSize ?? 1) <= 0) body.pause();
        });
        body.on('end', () => {
          if (open) controller.close();
          open = false;
        });
        body.on('error', (err) => {
          if (open) controller.error(err);
          open = false;
        });
      },
      pull() {
        body.resume();
      },
      cancel() {
        open = false;
        body.destroy();
      },
    },
    { highWaterMark: 16 },
  );
}
