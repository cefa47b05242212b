/** Bytes of an oversized line kept for {@link BoundedLineReaderOptions.onOversize}, to tell which request it answered. */
const HEAD_BYTES = 256;

export interface BoundedLineReaderOptions {
  /** Most bytes a line may have, its newline not counted. */
  maxBytes: number;
  /** A complete, non-empty line within the cap (UTF-8, a trailing `\r` removed). */
  onLine: (line: string) => void;
  /**
   * A line passed `maxBytes`: called once, as soon as it does (not when it ends), with its first
   * bytes. What was buffered of it is dropped, and so is the rest of it, up to its newline.
   */
  onOversize: (head: string) => void;
}

/**
 * Splits a byte stream into newline-terminated lines (MCP over stdio: one JSON-RPC message a
 * line) without ever holding more than `maxBytes` of one line. Chunks are kept as they came and
 * joined once, when the line ends, so a long line costs linear time (the SDK's ReadBuffer copies
 * all it holds on every chunk: quadratic, seconds of a blocked event loop for tens of MB).
 */
export class BoundedLineReader {
  private parts: Buffer[] = [];
  private size = 0;
  /** Inside a line that passed the cap: everything up to its newline is dropped. */
  private discarding = false;

  constructor(private readonly options: BoundedLineReaderOptions) {}

  /** Feeds the next chunk; calls `onLine` for each line it completes, `onOversize` for one that passes the cap. */
  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      if (!this.discarding) this.take(chunk.subarray(start, end));
      if (newline === -1) return;
      if (this.discarding) this.discarding = false;
      else this.emit();
      start = newline + 1;
    }
  }

  /** Drops what is buffered of an unfinished line (the stream is closing). */
  clear(): void {
    this.parts = [];
    this.size = 0;
    this.discarding = false;
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.size + piece.length <= this.options.maxBytes) {
      this.parts.push(piece);
      this.size += piece.length;
      return;
    }
    const head = headOf([...this.parts, piece]);
    this.clear();
    this.discarding = true;
    this.options.onOversize(head);
  }

  private emit(): void {
    if (this.size === 0) return;
    const line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    const text = line.toString('utf8');
    this.options.onLine(text.endsWith('\r') ? text.slice(0, -1) : text);
  }
}

/** The first {@link HEAD_BYTES} of a line held in pieces, without joining the rest. */
function headOf(parts: Buffer[]): string {
  const head: Buffer[] = [];
  let size = 0;
  for (const part of parts) {
    if (size >= HEAD_BYTES) break;
    head.push(part.subarray(0, HEAD_BYTES - size));
    size += head.at(-1)!.length;
  }
  return Buffer.concat(head).toString('utf8');
}
