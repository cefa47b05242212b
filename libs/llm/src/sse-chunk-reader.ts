import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { APIError } from 'openai';

/** Longest event (or line) held while it arrives, in characters: a body that never ends its line does not eat the heap. */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024;

const NONE: readonly unknown[] = Object.freeze([]);

/**
 * Decodes an OpenAI-style Server-Sent Events body into its JSON chunks, bytes in, chunks out,
 * with no I/O: feed it the body's reads as they come, in any split.
 *
 * What it does with the events is what the openai SDK's `Stream` did: each event's data (its
 * `data:` lines joined with `\n`) is one JSON chunk; `[DONE]` ends the stream (later events are
 * ignored); a payload with an `error` member is an error. Unlike the SDK it also takes an
 * `event: error` without that member as an error, rather than as a chunk. Line endings may be LF,
 * CRLF or CR; comments, `id:` and `retry:` are ignored; an event still open when the body ends
 * is dropped (the SSE rules, and the SDK's); an event longer than {@link MAX_EVENT_CHARS} is an
 * error.
 */
export class SseJsonDecoder {
  private readonly text = new TextDecoder();
  private readonly parser: EventSourceParser;
  private batch: unknown[] = [];
  private error: Error | undefined;
  private finished = false;

  /** @param headers The response's headers, kept on the errors it reports. */
  constructor(private readonly headers?: Headers) {
    this.parser = createParser({
      maxBufferSize: MAX_EVENT_CHARS,
      onEvent: (event) => this.onEvent(event),
      onError: (err) => {
        if (err.type === 'max-buffer-size-exceeded') this.error ??= new Error(`the server sent an event longer than ${MAX_EVENT_CHARS} characters`);
      },
    });
  }

  /** Set once the stream reported an error: callers throw it after using the chunks before it. */
  get failure(): Error | undefined {
    return this.error;
  }

  /** `[DONE]` arrived. */
  get done(): boolean {
    return this.finished;
  }

  /** The chunks completed by `bytes`, in order (often none or one). */
  push(bytes: Uint8Array): readonly unknown[] {
    if (this.error) return NONE;
    this.parser.feed(this.text.decode(bytes, { stream: true }));
    return this.take();
  }

  /** The chunks completed by the end of the body (an unfinished last event is dropped). */
  end(): readonly unknown[] {
    if (this.error) return NONE;
    const rest = this.text.decode();
    if (rest !== '') this.parser.feed(rest);
    return this.take();
  }

  private take(): readonly unknown[] {
    if (this.batch.length === 0) return NONE;
    const out = this.batch;
    this.batch = [];
    return out;
  }

  private onEvent(event: EventSourceMessage): void {
    if (this.finished || this.error) return;
    const data = event.data;
    if (data.startsWith('[DONE]')) {
      this.finished = true;
      return;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      this.error = new Error(`the server sent an event that is not JSON: ${data.length > 200 ? `${data.slice(0, 200)}…` : data}`);
      return;
    }
    const error = chunk !== null && typeof chunk === 'object' ? (chunk as { error?: unknown }).error : undefined;
    if (error) {
      this.error = new APIError(undefined, error as object, undefined, this.headers);
    } else if (event.event === 'error') {
      this.error = new APIError(undefined, chunk as object, undefined, this.headers);
    } else {
      this.batch.push(chunk);
    }
  }
}

/**
 * Reads a streamed chat completion's body with {@link SseJsonDecoder}: one `read()` per batch of
 * chunks, so a network read costs one promise, not one per layer of async iterators.
 */
export class SseChunkReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder: SseJsonDecoder;
  private ended = false;

  /** @throws Error when the response has no body. */
  constructor(response: Response) {
    if (!response.body) throw new Error('the server answered without a body');
    this.reader = response.body.getReader();
    this.decoder = new SseJsonDecoder(response.headers);
  }

  /**
   * The next chunks, at least one; `null` once the body has ended.
   * @throws the stream's error event (an openai `APIError`), a chunk that is not JSON, or what
   * the body's read threw (abort, dropped connection).
   */
  async read(): Promise<readonly unknown[] | null> {
    for (;;) {
      if (this.decoder.failure) throw this.decoder.failure;
      if (this.ended) return null;
      const { value, done } = await this.reader.read();
      if (done) this.ended = true;
      const chunks = done ? this.decoder.end() : this.decoder.push(value);
      if (chunks.length > 0) return chunks;
    }
  }

  /** Stops reading and closes the connection, unless the body has already ended. */
  async cancel(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.reader.cancel().catch(() => undefined);
  }
}
