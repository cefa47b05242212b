import { AsyncLocalStorage } from 'node:async_hooks';
import { ErrorCode, McpError, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { Countdown } from '#core/util/countdown.js';

/** Asks a person what the server's `elicitation/create` wants to know; `signal` fires when the server withdraws it or the call ends. */
export type ElicitationAnswerer = (request: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult>;

/** How one tool call runs. */
export interface McpCallOptions {
  /** Cancels the call on the server (notifications/cancelled). */
  signal: AbortSignal;
  /** The call fails with a timeout after this long without an answer or a progress notification. */
  timeoutMs: number;
  /** However much progress it reports, it fails after this long (default: PROGRESS_MAX_FACTOR × `timeoutMs`). */
  maxTotalMs?: number;
  /**
   * Answers the elicitations the server sends during this call. The time the person takes does
   * not count against `timeoutMs` or `maxTotalMs`; after the answer the server has `timeoutMs`
   * again.
   */
  onElicitation?: ElicitationAnswerer;
}

/** The SDK's own request timer is off for calls (it cannot be held while a person answers): an InFlightCall's runs instead. */
export const SDK_TIMEOUT_OFF = 2_147_483_647;

/**
 * A tool call in flight on a connection: who answers its elicitations, and its timeouts (no
 * answer or progress for `timeoutMs`; at most `maxTotalMs` in all), which a person's answer holds.
 * Either aborts `controller` as the SDK's own timeout would: the same error, and
 * notifications/cancelled to the server.
 */
export class InFlightCall {
  readonly controller = new AbortController();
  private readonly idle: Countdown;
  private readonly total: Countdown;

  constructor(
    readonly options: McpCallOptions,
    maxTotalMs: number,
  ) {
    const expire = (ms: number) => () => this.controller.abort(McpError.fromError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: ms }));
    this.idle = new Countdown(options.timeoutMs, expire(options.timeoutMs));
    this.total = new Countdown(maxTotalMs, expire(maxTotalMs));
  }

  progress(): void {
    this.idle.restart();
  }

  /** Holds both timeouts while a person answers; released, the server gets its whole `timeoutMs` again. */
  hold(): () => void {
    const idle = this.idle.hold();
    const total = this.total.hold();
    return () => {
      this.idle.restart();
      idle();
      total();
    };
  }

  end(): void {
    this.idle.stop();
    this.total.stop();
  }
}

/**
 * The tool call whose request carried the message being handled. The streamable HTTP transport
 * reads a call's response stream in the async context of the call's send, so a server's
 * request on that stream (an elicitation about this call) is handled in it too; a request on
 * the standalone stream, stdio or SSE has none.
 */
export const currentCall = new AsyncLocalStorage<InFlightCall>();
