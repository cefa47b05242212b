import type { ToolsConfig } from '#core/config/settings.js';
import { createFetchUrlTool } from '#core/tools/builtin/fetch-url.tool.js';
import { createFileTools } from '#core/tools/builtin/file-tools.js';
import { createHttpRequestTool } from '#core/tools/builtin/http-request.tool.js';
import { createShellTool } from '#core/tools/builtin/shell.tool.js';
import { createWebSearchTool } from '#core/tools/builtin/web-search.tool.js';
import { createWriteTodosTool } from '#core/tools/builtin/write-todos.tool.js';
import type { Tool } from '#core/tools/tool.js';
import type { Caller } from '#core/session/caller.js';
import type { Workspace } from '#core/workspace/workspace.js';

/**
 * The built-in tools every assistant gets: todos, workspace files, outbound HTTP behind
 * the address guard, web search when TAVILY_API_KEY is set, shell only when enabled.
 */
export function buildBuiltinTools(config: ToolsConfig, workspaceFor: (caller: Caller) => Workspace): Tool[] {
  const outbound = { allowlist: config.outboundAllowlist, timeoutMs: config.toolTimeoutMs };
  const tools: Tool[] = [
    createWriteTodosTool(),
    ...createFileTools(workspaceFor, { resultMaxBytes: config.toolResultMaxBytes }),
    createHttpRequestTool(outbound),
    createFetchUrlTool(outbound),
  ];
  const search = createWebSearchTool(config.tavilyApiKey);
  if (search) tools.push(search);
  if (config.shellEnabled) tools.push(createShellTool(workspaceFor, { timeoutMs: config.toolTimeoutMs }));
  return tools;
}
