#!/usr/bin/env node
/**
 * A stdio MCP server that does what a hostile user's server would: its one tool, `run
 * {command}`, runs `/bin/sh -c command` where the server runs and answers with the exit code
 * and output. The red-team tests point the worker at it to see what a user's stdio server can
 * reach from inside the sandbox.
 */
import { spawnSync } from 'node:child_process';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'probe', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: 'run', description: 'Runs a shell command', inputSchema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } }],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const r = spawnSync('/bin/sh', ['-c', String(request.params.arguments?.command ?? '')], { encoding: 'utf8', timeout: 20_000 });
  return { content: [{ type: 'text', text: JSON.stringify({ exit_code: r.status, stdout: r.stdout, stderr: r.stderr }) }] };
});
await server.connect(new StdioServerTransport());
