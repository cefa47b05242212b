import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { ElicitationPrompt } from '#core/events/execution-event.js';
import { formSchemaOf } from '#core/hitl/elicitation.js';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import type { Tool, ToolContext, ToolResult } from '#core/tools/tool.js';
import { HttpConnectionError } from './dropped-stream-fetch.js';
import { McpAuthorizationRequired, McpUnavailableError, PROGRESS_MAX_FACTOR, type ElicitationAnswerer, type McpToolEntry } from './mcp-connection.js';
import { McpMessageTooDeepError, McpMessageTooLargeError } from './message-limits.js';
import type { McpLease } from './mcp-pool.js';

/** A tool's name in events, the audit and the API: `server.tool`. */
export function qualifiedToolName(server: string, tool: string): string {
  return `${server}.${tool}`;
}

/** Retries of an idempotent call after a timeout or a lost connection, and the first pause (doubled each time, ±50 %). */
export const MCP_RETRY = { retries: 2, baseDelayMs: 250 } as const;

/**
 * The tools one server offers a run, named `server.tool` so two servers never clash, called
 * through the run's lease on the pool. Failures come back to the model as readable results that
 * say whether a retry makes sense; the conversation goes on.
 */
export function mcpTools(server: McpServerConfig, lease: McpLease, defaultTimeoutMs: number): Tool[] {
  return lease.connection.catalog.tools.map((entry) => mcpTool(server, entry, lease, defaultTimeoutMs));
}

/**
 * How a tool is governed: its timeout (the tool's setting, else the server's, else the
 * worker's), whether it is retried (idempotent or read-only by its annotations or the config;
 * never when its annotations say destructive), and whether a person approves each call
 * (destructive, unless the config says otherwise).
 */
export function toolPolicy(server: McpServerConfig, entry: McpToolEntry, defaultTimeoutMs: number) {
  const settings = server.tools?.[entry.name] ?? {};
  const hints = entry.annotations ?? {};
  const destructive = hints.destructiveHint === true;
  return {
    timeoutMs: settings.timeoutMs ?? server.timeoutMs ?? defaultTimeoutMs,
    retried: !destructive && (settings.idempotent ?? (hints.idempotentHint === true || hints.readOnlyHint === true)),
    approval: settings.approval ?? destructive,
    readOnly: hints.readOnlyHint === true,
    destructive,
  };
}

function mcpTool(server: McpServerConfig, entry: McpToolEntry, lease: McpLease, defaultTimeoutMs: number): Tool {
  const { $schema: _dialect, ...schema } = entry.inputSchema;
  const about = server.description ? ` (from ${server.name}: ${server.description})` : ` (from the ${server.name} MCP server)`;
  const policy = toolPolicy(server, entry, defaultTimeoutMs);
  const { timeoutMs } = policy;
  const attempts = policy.retried ? MCP_RETRY.retries + 1 : 1;
  return {
    name: qualifiedToolName(server.name, entry.name),
    description: `${entry.description}${about}`,
    parameters: { type: 'object', ...schema },
    sensitive: policy.approval,
    readOnly: policy.readOnly,
    idempotent: policy.retried,
    // Each attempt ends itself at `timeoutMs` without progress, or at the hard maximum with it
    // (and cancels the call on the server); the dispatcher's own limit is a backstop past them all.
    timeoutMs: attempts * (timeoutMs * PROGRESS_MAX_FACTOR + 1_000) + MCP_RETRY.baseDelayMs * 2 ** attempts,
    async execute(args, ctx): Promise<ToolResult> {
      for (let attempt = 1; ; attempt++) {
        try {
          return renderResult(await lease.callTool(entry.name, args, { signal: ctx.signal, timeoutMs, ...(ctx.elicit ? { onElicitation: askPerson(server.name, ctx) } : {}) }));
        } catch (err) {
          const failed = classify(server.name, entry.name, err, timeoutMs, policy.destructive);
          if (attempt >= attempts || !failed.retry || ctx.signal.aborted) return toResult(failed, attempt);
          const delay = MCP_RETRY.baseDelayMs * 2 ** (attempt - 1) * (0.5 + Math.random());
          if (!(await pause(delay, ctx.signal))) return toResult(failed, attempt);
        }
      }
    },
  };
}

/**
 * Answers a server's elicitation during a call by asking the run's person (form or URL mode).
 * A form is shown as {@link formSchemaOf} keeps it; a URL that is not http(s) is never shown.
 * @throws McpError (invalid params) for a question that cannot be shown; the server gets it.
 */
export function askPerson(server: string, ctx: Pick<ToolContext, 'elicit' | 'signal'>): ElicitationAnswerer {
  return async (params, serverSignal) => {
    const prompt = promptOf(server, params);
    // Withdrawn by the server, or the call ended (cancel, timeout): either ends the question.
    const signal = AbortSignal.any([serverSignal, ctx.signal]);
    const answer = await ctx.elicit!(prompt, signal);
    if (answer.action !== 'accept') return { action: answer.action };
    return prompt.mode === 'form' ? { action: 'accept', content: (answer.content ?? {}) as ElicitResult['content'] } : { action: 'accept' };
  };
}

function promptOf(server: string, params: ElicitRequest['params']): ElicitationPrompt {
  if (params.mode === 'url') {
    const url = URL.canParse(params.url) ? new URL(params.url) : null;
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new McpError(ErrorCode.InvalidParams, 'Elicitation refused: DataAgent shows a person http and https URLs only');
    return { server, mode: 'url', message: params.message, url: url.href };
  }
  const form = formSchemaOf(params.requestedSchema);
  if (!form.ok) throw new McpError(ErrorCode.InvalidParams, `Elicitation refused: ${form.reason}`);
  return { server, mode: 'form', message: params.message, requestedSchema: form.schema };
}

/** Waits `ms`; false when the signal fired first. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve(true);
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

/**
 * A tool result for the model: text as it is, structured content as JSON beside it, images,
 * audio and resources described by kind, size and address (their bytes stay out of the prompt).
 * When there are such blocks, the MCP content goes whole into `content`, for the event.
 */
export function renderResult(result: CallToolResult): ToolResult {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    if (item.type === 'text') parts.push(item.text);
    else if (item.type === 'image' || item.type === 'audio') parts.push(`[${item.type} ${item.mimeType}, ${Math.floor((item.data.length * 3) / 4)} bytes]`);
    else if (item.type === 'resource_link') parts.push(`[resource ${item.name ? `${item.name} ` : ''}${item.uri}${item.mimeType ? ` (${item.mimeType})` : ''}]`);
    else if (item.type === 'resource') {
      const r = item.resource as { uri: string; mimeType?: string; text?: string; blob?: string };
      parts.push(typeof r.text === 'string' ? r.text : `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}, ${Math.floor(((r.blob ?? '').length * 3) / 4)} bytes]`);
    }
  }
  const text = parts.join('\n');
  // Images, audio and resources reach clients whole, in the event; the model gets their description.
  const whole = (result.content ?? []).some((item) => item.type !== 'text') ? { content: result.content } : {};
  if (result.isError) return { success: false, output: null, error: text || 'The tool reported an error', ...whole };
  const structured = result.structuredContent;
  return { success: true, output: structured === undefined ? text : { text, structured_content: structured }, ...whole };
}

/** Why a call failed, in the audit's and the model's words. */
export type McpFailureReason = 'unavailable' | 'sign_in_required' | 'unauthorized' | 'unreachable' | 'connection_lost' | 'timeout' | 'invalid_output' | 'too_large' | 'server_error' | 'failed';

interface Failure {
  reason: McpFailureReason;
  message: string;
  /** Whether calling again may help (a timeout, a restart), or not (bad credentials, a broken tool). */
  retry: boolean;
  status?: ToolResult['status'];
}

/** A failed call as the model sees it: what happened, and whether trying again makes sense. */
function classify(server: string, tool: string, err: unknown, timeoutMs: number, destructive: boolean): Failure {
  const name = qualifiedToolName(server, tool);
  if (destructive && err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
    return {
      reason: 'timeout',
      retry: false,
      status: 'timeout',
      message: `${name} did not answer within ${timeoutMs} ms; the call was cancelled, but whether it took effect is unknown. It changes things: check before calling it again.`,
    };
  }
  if (err instanceof McpMessageTooLargeError) {
    return {
      reason: 'too_large',
      retry: false,
      message: `${err.message}, so the answer of ${name} was dropped unread. The same call will fail again: ask for less (a narrower query, fewer rows, one page) or use another tool.`,
    };
  }
  if (err instanceof McpMessageTooDeepError) {
    return { reason: 'invalid_output', retry: false, message: `${name} returned output that cannot be read (${err.message}). The server is at fault; trying again will not help.` };
  }
  if (err instanceof McpUnavailableError) {
    if (err instanceof McpAuthorizationRequired) {
      return { reason: 'sign_in_required', retry: false, message: `${err.message}. The person must sign in to ${err.server} again (the MCP tab) before its tools work; tell them.` };
    }
    return { reason: 'unavailable', retry: err.retryable, message: `${err.message}. ${err.retryable ? 'Trying again later may work.' : 'Trying again will not help until its configuration is fixed.'}` };
  }
  if (err instanceof StreamableHTTPError && (err.code === 401 || err.code === 403)) {
    return { reason: 'unauthorized', retry: false, message: `The ${server} server refused the call to ${name} (HTTP ${err.code}: not authorized). Trying again will not help until its credentials are fixed.` };
  }
  if (err instanceof HttpConnectionError && err.unreachable) {
    return { reason: 'unreachable', retry: true, message: `The ${server} server could not be reached for ${name} (${err.message}); the call did not run. Trying again later may work.` };
  }
  if (err instanceof HttpConnectionError || (err instanceof McpError && err.code === ErrorCode.ConnectionClosed)) {
    const detail = err.message.replace(/^MCP error -?\d+: /, '');
    return {
      reason: 'connection_lost',
      retry: true,
      message: `The ${server} server went away during the call to ${name} (${detail}); whether it took effect is unknown. Check before trying again; the next call reconnects.`,
    };
  }
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) {
      return { reason: 'timeout', retry: true, status: 'timeout', message: `${name} did not answer within ${timeoutMs} ms; the call was cancelled. Trying again may work; if it keeps timing out, another tool may answer instead.` };
    }
    if (/output schema/i.test(err.message)) {
      return { reason: 'invalid_output', retry: false, message: `${name} returned output that breaks its own output schema (${err.message}). The server is at fault; trying again will not help.` };
    }
    return { reason: 'server_error', retry: false, message: `${name} failed: ${err.message}. Trying again with the same arguments will not help.` };
  }
  return { reason: 'failed', retry: true, message: `${name} failed: ${err instanceof Error ? err.message : String(err)}. Trying again may work.` };
}

function toResult(failed: Failure, attempts: number): ToolResult {
  const note = attempts > 1 ? ` (${attempts} attempts)` : '';
  return {
    success: false,
    output: { retry: failed.retry, reason: failed.reason, attempts },
    error: `${failed.message}${note}`,
    ...(failed.status ? { status: failed.status } : {}),
  };
}
