import { IsBoolean, IsInt, IsOptional, IsString, Min, registerDecorator, type ValidationArguments } from 'class-validator';
import { Env } from '../config/env.js';
import { parseAllowlist } from './builtin/net/outbound-guard.js';
import { DEFAULT_TOOL_RESULT_MAX_BYTES } from './tool-output-cap.js';

/** Validates DATAAGENT_OUTBOUND_ALLOWLIST entries at startup, naming the first bad one. */
export function IsOutboundAllowlist(): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'isOutboundAllowlist',
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown) => Array.isArray(value) && value.every((v) => typeof v === 'string') && problem(value) === null,
        defaultMessage: ({ value }: ValidationArguments) =>
          `must list hosts, *.suffixes, IPs, CIDRs or host:port entries (${Array.isArray(value) ? problem(value as string[]) ?? '' : 'not a list'})`,
      },
    });
}

function problem(entries: string[]): string | null {
  try {
    parseAllowlist(entries);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Built-in tools: outbound HTTP policy, shell, web search. Workspace settings: see WorkspaceConfig. */
export class ToolsConfig {
  /**
   * Private or loopback hosts, IPs, CIDRs or `host:port` that `http_request`/`fetch_url`, users'
   * remote MCP servers and their authorization servers (the gateway starts sign-ins) may reach
   * anyway; a bad entry stops the process at startup.
   */
  @Env('DATAAGENT_OUTBOUND_ALLOWLIST', 'list') @IsOutboundAllowlist()
  outboundAllowlist: string[] = [];

  /** Offers the `shell` tool (always needs approval); in multi-tenant mode only with the sandbox. */
  @Env('DATAAGENT_SHELL_ENABLED', 'bool') @IsBoolean({ message: 'must be true or false' })
  shellEnabled = false;

  /** Tavily key: set, the `web_search` tool is offered. */
  @Env('TAVILY_API_KEY') @IsOptional() @IsString()
  tavilyApiKey?: string;

  /** Default per-tool timeout in milliseconds. */
  @Env('DATAAGENT_TOOL_TIMEOUT_MS', 'int') @IsInt() @Min(1)
  toolTimeoutMs = 30_000;

  /**
   * UTF-8 bytes of one tool result (any tool) in its event, the stores and the prompt; more is cut
   * with a `[… cut: 9.5 MB of 9.6 MB not shown; …]` marker. `read_file` pages fit in it.
   */
  @Env('DATAAGENT_TOOL_RESULT_MAX_BYTES', 'int') @IsInt() @Min(1024)
  toolResultMaxBytes = DEFAULT_TOOL_RESULT_MAX_BYTES;
}
