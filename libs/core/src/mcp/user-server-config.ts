import { IsInt, Max, Min, registerDecorator, type ValidationArguments } from 'class-validator';
import { Env } from '../config/env.js';
import { parseStdioAllowlist } from './stdio-allowlist.js';

/** Validates DATAAGENT_MCP_STDIO_ALLOW at startup, naming the first bad entry and what it must be. */
export function IsStdioAllowlist(): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'isStdioAllowlist',
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown) => typeof value === 'string' && problem(value) === null,
        defaultMessage: ({ value }: ValidationArguments) =>
          `must list stdio commands ("mcp-server-git", "/opt/mcp/*", "npx -y some-server env=API_KEY", or a JSON list): ${typeof value === 'string' ? problem(value) ?? '' : 'not text'}`,
      },
    });
}

function problem(text: string): string | null {
  try {
    parseStdioAllowlist(text);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** MCP servers users register themselves: what the gateway accepts, and what workers hold per user. */
export class McpConfig {
  /**
   * MCP servers one user may register (429 `mcp_server_limit` past it; a tenant's own
   * `max_mcp_servers` wins); also the connections a worker's pool holds per user.
   */
  @Env('DATAAGENT_MCP_MAX_SERVERS_PER_USER', 'int') @IsInt() @Min(1) @Max(100)
  maxServersPerUser = 5;

  /**
   * stdio commands users may register, matched by real path: `mcp-server-git`, a folder
   * `/opt/mcp/*`, a launcher only with its arguments pinned (`npx -y
   * @modelcontextprotocol/server-everything`), each with the env names users may set
   * (`env=API_KEY:OTHER`); or a JSON list (parsed by `parseStdioAllowlist`). Empty: users register
   * remote servers only.
   */
  @Env('DATAAGENT_MCP_STDIO_ALLOW') @IsStdioAllowlist()
  stdioAllow = '';
}
