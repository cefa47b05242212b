import type { ToolsConfig } from '../tools-config.js';
import { createFetchUrlTool } from './fetch-url.tool.js';
import { createFileTools } from './file-tools.js';
import { createHttpRequestTool } from './http-request.tool.js';
import { createShellTool } from './shell.tool.js';
import { createWebSearchTool } from './web-search.tool.js';
import { createWriteTodosTool } from './write-todos.tool.js';
import type { Tool } from '../tool.js';
import type { Caller } from '../../auth/caller.js';
import type { Workspace } from '../../workspace/workspace.js';
import type { Sandbox } from '../../sandbox/sandbox.js';

/**
 * The built-in tools every assistant gets, on a worker or in the CLI's local mode: todos, workspace files, outbound HTTP behind
 * the address guard, web search when TAVILY_API_KEY is set, shell only when enabled.
 */
export function buildBuiltinTools(config: ToolsConfig, workspaceFor: (caller: Caller) => Workspace, sandbox?: Sandbox): Tool[] {
  const outbound = { allowlist: config.outboundAllowlist, timeoutMs: config.toolTimeoutMs };
  const tools: Tool[] = [
    createWriteTodosTool(),
    ...createFileTools(workspaceFor, { resultMaxBytes: config.toolResultMaxBytes }),
    createHttpRequestTool(outbound),
    createFetchUrlTool(outbound),
  ];
  const search = createWebSearchTool(config.tavilyApiKey);
  if (search) tools.push(search);
  if (config.shellEnabled) tools.push(createShellTool(workspaceFor, { timeoutMs: config.toolTimeoutMs, ...(sandbox ? { sandbox } : {}) }));
  return tools;
}
