import 'reflect-metadata';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { ConfigError, loadConfigs } from '#core/config/env.js';
import { DEFAULT_ASSISTANT_ID } from '#core/config/assistant-catalog.js';
import type { AgentBackend } from './agent/agent-backend.js';
import type { LocalMcp } from './agent/local-mcp.js';
import { UnknownSessionError } from './agent/session-files.js';
import { McpConfigFileError, UnknownAssistantError } from './agent/usage-errors.js';
import { EXIT } from './commands/exit-codes.js';
import { runPrint } from './commands/print.command.js';
import type { ApprovalMode } from './hitl/approval-mode.js';
import type { Approver } from './hitl/approver.js';
import type { Elicitor } from './hitl/elicitor.js';
import { readQuestion } from './input/read-question.js';
import { InteractiveSession } from './ui/interactive-session.js';

// What only one mode needs (the terminal UI, the agent in this process with its model providers
// and tools, the gateway client) is imported when that mode runs: `--help` and a `-p` question
// do not load the terminal UI, and `--server` loads no agent.

interface Flags {
  print?: string;
  json?: boolean;
  server?: string;
  apiKey?: string;
  resume?: string;
  assistant: string;
  approveAll?: boolean;
  yes?: boolean;
  mcpConfig?: string;
}

const program = new Command('dataagent')
  .description('DataAgent from the terminal: the agent runs here (local mode) or on a gateway (--server).')
  .addOption(new Option('-p, --print <question>', 'answer QUESTION ("-": read it from stdin), print the answer and exit'))
  .option('--json', 'with -p: print every event as a JSON line')
  .option('--server <url>', 'run on a DataAgent gateway instead of in this process')
  .addOption(new Option('--api-key <key>', 'API key for --server').env('DATAAGENT_API_KEY'))
  .option('--resume <session_id>', 'continue an earlier session')
  .option('--assistant <id>', 'assistant to talk to', DEFAULT_ASSISTANT_ID)
  .option('--approve-all', 'approve every call that needs approval (default: -p rejects it, which ends the run; the interactive UI asks)')
  .option('-y, --yes', 'the same as --approve-all')
  .option('--mcp-config <path>', 'local mode: MCP servers to connect (default ~/.deepagents/<assistant>/mcp.json when it exists)')
  .exitOverride()
  .showHelpAfterError();

/** Parses the command line and runs; resolves to the exit code. */
async function main(argv: string[]): Promise<number> {
  try {
    program.parse(argv);
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    throw err;
  }
  const flags = program.opts<Flags>();
  let backend: AgentBackend | undefined;
  try {
    if (flags.print === undefined) {
      if (!process.stdin.isTTY || !process.stdout.isTTY) {
        process.stderr.write('dataagent: the interactive UI needs a terminal: ask with -p "question" (see --help)\n');
        return EXIT.usage;
      }
      const session = new InteractiveSession(flags.server ? 'remote' : 'local');
      const [{ runInteractive }, opened] = await Promise.all([
        import('./commands/interactive.command.js'),
        open(flags, flags.approveAll || flags.yes ? 'approve_all' : session.approve, (line) => session.notice(line, 'warn'), true, session.elicit),
      ]);
      backend = opened;
      return await runInteractive(session, backend);
    }
    const question = await readQuestion(flags.print);
    if (!question) {
      process.stderr.write('dataagent: the question is empty\n');
      return EXIT.usage;
    }
    const warn = (line: string) => process.stderr.write(`dataagent: ${line}\n`);
    backend = await open(flags, flags.approveAll || flags.yes ? 'approve_all' : 'reject', warn, false);
    const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
    return await runPrint(backend, question, { json: flags.json === true }, { out: process.stdout, err: process.stderr, color });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`dataagent: bad configuration:\n${err.problems.map((p) => `  ${p}`).join('\n')}\n`);
      return EXIT.usage;
    }
    if (err instanceof UnknownAssistantError || err instanceof UnknownSessionError || err instanceof McpConfigFileError) {
      process.stderr.write(`dataagent: ${err.message}\n`);
      return EXIT.usage;
    }
    // GatewayError, a model without its key, a workspace that cannot be written: the run failed.
    process.stderr.write(`dataagent: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.error;
  } finally {
    await backend?.close();
  }
}

/**
 * The gateway with --server, else the agent in this process, configured like the server's workers.
 * For the interactive UI local MCP servers connect now, not at each run.
 */
async function open(flags: Flags, approvals: ApprovalMode | Approver, warn: (line: string) => void, interactive: boolean, elicit?: Elicitor): Promise<AgentBackend> {
  if (flags.server) {
    const { RemoteBackend } = await import('./agent/remote-backend.js');
    return RemoteBackend.connect({ server: flags.server, apiKey: flags.apiKey, assistantId: flags.assistant, approvals, resume: flags.resume, ...(elicit ? { elicit } : {}) });
  }
  const [{ LlmConfig, WorkerConfig }, { ToolsConfig }, { McpRuntimeConfig }, { describeChatModel, resolveModel }, { LocalBackend }, { localMcpConfigPath, openLocalMcp }] = await Promise.all([
    import('#core/config/settings.js'),
    import('#core/tools/tools-config.js'),
    import('#core/config/mcp-settings.js'),
    import('#llm/create-chat-model.js'),
    import('./agent/local-backend.js'),
    import('./agent/local-mcp.js'),
  ]);
  // Only the environment: the command line's flags are the CLI's own.
  const settings = loadConfigs({ llm: LlmConfig, tools: ToolsConfig, worker: WorkerConfig, mcp: McpRuntimeConfig }, process.env, []);
  if (resolveModel(settings.llm.model, settings.llm).provider === 'offline') warn(describeChatModel(settings.llm));
  const home = process.env.DATAAGENT_CLI_HOME || join(homedir(), '.dataagent');
  const mcpFile = localMcpConfigPath(flags.mcpConfig, flags.assistant);
  const mcp: LocalMcp | undefined = mcpFile
    ? await openLocalMcp(mcpFile, { config: settings.mcp, outboundAllowlist: settings.tools.outboundAllowlist, textTools: settings.worker.toolPrompt, warn, elicitation: elicit !== undefined })
    : undefined;
  try {
    if (interactive) await mcp?.connect();
    return new LocalBackend(settings, { home, assistantId: flags.assistant, approvals, resume: flags.resume, mcp, ...(elicit ? { elicit } : {}) });
  } catch (err) {
    await mcp?.close();
    throw err;
  }
}

process.exitCode = await main(process.argv);
// An idle keep-alive connection (the model's HTTP client) must not hold the answer's exit back.
setTimeout(() => process.exit(), 1000).unref();
