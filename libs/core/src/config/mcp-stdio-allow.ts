import { registerDecorator, type ValidationArguments } from 'class-validator';
import { parseStdioAllowlist } from '../mcp/stdio-allowlist.js';

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
