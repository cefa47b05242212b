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
  /** A user's own servers: the API refuses more, and a worker's pool holds at most this many connections per user. */
  @Env('DATAAGENT_MCP_MAX_SERVERS_PER_USER', 'int') @IsInt() @Min(1) @Max(100)
  maxServersPerUser = 5;

  /**
   * stdio commands a user may register, as written (parse with `parseStdioAllowlist`): programs
   * and folders matched by real path, launchers only with pinned arguments, and the env names
   * each may set. Empty: users register remote servers only.
   */
  @Env('DATAAGENT_MCP_STDIO_ALLOW') @IsStdioAllowlist()
  stdioAllow = '';
}
