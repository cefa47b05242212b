import type { Caller } from '../auth/caller.js';
import type { Tool } from '../tools/tool.js';
import type { AgentMiddleware } from './agent-middleware.js';

/**
 * What a run may use, as its caller's tenant switched it (the tenants' `FeatureSwitch` is one).
 * Declared here so the engine needs nothing of the tenants.
 */
export interface RunFeatures {
  tool(name: string): boolean;
  skill(name: string): boolean;
  mcpServer(name: string): boolean;
}

/** What a provider knows about the run it equips. */
export interface RunToolsRequest {
  caller: Caller;
  runId: string;
  sessionId: string;
  assistantId: string;
  /** Fires when the run is cancelled or handed off: a provider still connecting should give up. */
  signal: AbortSignal;
  /** The run's trace id (32 hex) when tracing is on, for records that should name it. */
  traceId?: string;
  /** What the caller's tenant may use; absent: everything. A provider leaves out what is switched off. */
  features?: RunFeatures;
}

/**
 * Something the person should know as the run starts, that does not stop it: a server whose
 * tools are left out until they sign in to it. The run tells them with a recoverable `error`.
 */
export interface RunNotice {
  errorCode: string;
  message: string;
  /** The MCP server it is about. */
  mcpServer?: string;
}

/** Tools and middleware one provider adds to one run, and how to give back what it holds. */
export interface RunTools {
  tools: Tool[];
  middleware: AgentMiddleware[];
  notices?: RunNotice[];
  /** Runs once when the run ends, however it ends (done, failed, cancelled, handed off). */
  release(): Promise<void>;
}

/**
 * The per-run seam through which memory, MCP servers and the like equip a run: asked once as
 * the run starts, released when it ends.
 */
export type RunToolProvider = (request: RunToolsRequest) => Promise<RunTools>;

export const NO_RUN_TOOLS: RunTools = { tools: [], middleware: [], release: async () => {} };

/**
 * Asks every provider, in order, and joins what they give. If one fails, what the others
 * already gave is released before the error goes on; the joined `release` releases all of
 * them, each once, even when one of them throws (the first error is rethrown after).
 */
export async function provideRunTools(providers: readonly RunToolProvider[], request: RunToolsRequest): Promise<RunTools> {
  const given: RunTools[] = [];
  const releaseAll = async () => {
    const errors: unknown[] = [];
    for (const part of given.splice(0).reverse()) {
      try {
        await part.release();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw errors[0];
  };
  try {
    for (const provide of providers) given.push(await provide(request));
  } catch (err) {
    await releaseAll().catch(() => undefined);
    throw err;
  }
  return {
    tools: given.flatMap((g) => g.tools),
    middleware: given.flatMap((g) => g.middleware),
    notices: given.flatMap((g) => g.notices ?? []),
    release: releaseAll,
  };
}
