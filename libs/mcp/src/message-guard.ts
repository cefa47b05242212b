import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { exceedsJsonDepth } from './json-depth.js';
import { McpMessageTooDeepError, refusalResponse, requestIdHint, type McpMessageTooLargeError } from './message-limits.js';

export interface MessageGuardOptions {
  /** The server's name, for the refusals' messages. */
  server: string;
  /** Levels of nesting a message may have (see MAX_JSON_DEPTH). */
  maxDepth: number;
}

/**
 * A transport between the SDK's client and the real one that refuses what the client must not
 * touch: a message nested deeper than `maxDepth` never reaches it (an answer becomes an error for
 * its request; anything else is dropped and reported), and an answer the real transport dropped
 * as too large ({@link refuseOversized}) fails the request it was for. It tracks the requests
 * still waiting for an answer to know which those are.
 */
export class MessageGuard implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  /** Ids of the requests sent and not answered yet. */
  private readonly pending = new Set<RequestId>();

  constructor(
    readonly inner: Transport,
    private readonly options: MessageGuardOptions,
  ) {
    inner.onclose = () => {
      this.pending.clear();
      this.onclose?.();
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => this.receive(message, extra);
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ('method' in message && 'id' in message) this.pending.add(message.id);
    else if ('method' in message && message.method === 'notifications/cancelled') this.pending.delete((message.params as { requestId?: RequestId } | undefined)?.requestId ?? '');
    try {
      await this.inner.send(message, options);
    } catch (err) {
      if ('method' in message && 'id' in message) this.pending.delete(message.id);
      throw err;
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /**
   * The real transport dropped a message as too large, unread. If its first bytes name a request
   * still waiting, that request fails with `error`; otherwise (the id comes last, or was cut off)
   * every waiting request does, since any of them may have been the one answered.
   */
  refuseOversized(error: McpMessageTooLargeError, head: string): void {
    const hinted = requestIdHint(head);
    const ids = hinted !== undefined && this.pending.has(hinted) ? [hinted] : [...this.pending];
    this.onerror?.(error);
    for (const id of ids) this.deliver(refusalResponse(id, error));
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (exceedsJsonDepth(message, this.options.maxDepth)) {
      const error = new McpMessageTooDeepError(this.options.server, this.options.maxDepth);
      this.onerror?.(error);
      const id = 'id' in message && !('method' in message) ? message.id : undefined;
      if (id !== undefined && this.pending.has(id)) this.deliver(refusalResponse(id, error));
      return;
    }
    this.deliver(message, extra);
  }

  private deliver(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ('id' in message && !('method' in message) && message.id !== undefined) this.pending.delete(message.id);
    this.onmessage?.(message, extra);
  }
}
