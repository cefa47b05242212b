import { isAbsolute } from 'node:path';
import type { McpServerConfig } from './mcp-config.js';

/**
 * What every stdio server gets from the process that starts it, besides PATH: enough for a
 * program to find its home, language and clock, and nothing that could hold a secret. The
 * server's configuration can add names to it; it never inherits anything else.
 */
export const STDIO_BASE_ENV = ['HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;

/** The names a user's server can never set: PATH (fixed, so the allowlist's lookup is the real one) and the base. */
export const STDIO_FIXED_ENV: ReadonlySet<string> = new Set(['PATH', ...STDIO_BASE_ENV]);

/** When the process has no PATH with an absolute folder. */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The PATH a stdio server runs with, and that its command is looked up in: the starting
 * process's own, without relative folders (`.`, an empty entry), which would make the lookup
 * depend on the folder the process happens to run in.
 * @param host the starting process's environment.
 */
export function stdioPath(host: NodeJS.ProcessEnv = process.env): string {
  const folders = (host.PATH ?? '').split(':').filter((dir) => isAbsolute(dir));
  return folders.length > 0 ? folders.join(':') : DEFAULT_PATH;
}

/**
 * The whole environment of a stdio server's process: PATH and the base names from the starting
 * process, then the server's own `env`. Nothing else of the worker's environment reaches it
 * (no API keys, no DATAAGENT_* settings, no LD_PRELOAD or NODE_OPTIONS the worker runs with).
 *
 * A user's server reaches this only after its `env` names passed the operator's allowlist
 * (`matchStdioServer`, at registration and again on the worker), which never lets it set PATH
 * or a base name; the operator's own servers (DATAAGENT_MCP_CONFIG) are trusted with any name.
 * @param config the server's configuration; only `env` is read.
 * @param host the starting process's environment.
 * @returns a new object, safe to hand to `spawn` as the complete environment.
 */
export function stdioEnvironment(config: Pick<McpServerConfig, 'env'>, host: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = { PATH: stdioPath(host) };
  for (const name of STDIO_BASE_ENV) {
    const value = host[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...config.env };
}
