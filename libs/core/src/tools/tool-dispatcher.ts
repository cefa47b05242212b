import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { ToolCallRequest, ToolSpec } from '../llm/chat-model.js';
import { Countdown } from '../util/countdown.js';
import type { Tool, ToolContext, ToolResult } from './tool.js';
import { wireToolName } from './tool-names.js';

export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

// Tag calls carry every value as a string (XML attributes have no numbers): "5" is coerced to 5 where the schema wants a number.
const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: true });
const compiledByObject = new WeakMap<object, ValidateFunction>();
const compiledByText = new Map<string, ValidateFunction>();

/**
 * Compiles a tool's schema once per process: a dispatcher is built for every run, and
 * per-run tools (memory) bring equal schemas in new objects.
 */
function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  let validate = compiledByObject.get(schema);
  if (validate) return validate;
  const text = JSON.stringify(schema);
  validate = compiledByText.get(text);
  if (!validate) {
    validate = ajv.compile(schema);
    compiledByText.set(text, validate);
  }
  compiledByObject.set(schema, validate);
  return validate;
}

/** Two tools with one name in one run: a configuration error, never a silent override. */
export class DuplicateToolError extends Error {
  constructor(readonly toolName: string) {
    super(`Two tools are named "${toolName}"; tool names must be unique`);
    this.name = 'DuplicateToolError';
  }
}

/**
 * Routes every tool call to the tool that serves it, with argument validation against
 * the tool's JSON Schema and a per-tool timeout. Failures come back as results for the
 * model, never as exceptions.
 */
export class ToolDispatcher {
  private readonly tools = new Map<string, { tool: Tool; validate: ValidateFunction }>();
  /** Wire spellings (`server__tool`) of names an API would not take (`server.tool`). */
  private readonly aliases = new Map<string, string>();

  constructor(tools: Iterable<Tool> = [], private readonly defaultTimeoutMs = DEFAULT_TOOL_TIMEOUT_MS) {
    for (const tool of tools) this.register(tool);
  }

  /** @throws DuplicateToolError when a tool of that name is registered already: one never silently replaces another. */
  register(tool: Tool): void {
    if (this.tools.has(tool.name)) throw new DuplicateToolError(tool.name);
    this.tools.set(tool.name, { tool, validate: compileSchema(tool.parameters) });
    const wire = wireToolName(tool.name);
    if (wire !== tool.name) this.aliases.set(wire, tool.name);
  }

  /** The tool a call names, by its name or its wire spelling (text calls may use either). */
  get(name: string): Tool | undefined {
    return this.entry(name)?.tool;
  }

  private entry(name: string) {
    return this.tools.get(name) ?? this.tools.get(this.aliases.get(name) ?? '');
  }

  specs(): ToolSpec[] {
    return [...this.tools.values()].map(({ tool }) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
  }

  /**
   * Checks a call's arguments against its tool's schema without running it.
   * @returns what is wrong, field by field, or null when the call is valid (or names no tool).
   */
  check(call: ToolCallRequest): InvalidArgument[] | null {
    const entry = this.entry(call.name);
    if (!entry) return null;
    return entry.validate(decodeStructuredStrings(call.arguments, entry.tool.parameters)) ? null : describeErrors(entry.validate.errors ?? []);
  }

  async dispatch(call: ToolCallRequest, ctx: ToolContext): Promise<Omit<ToolResult, 'status'> & { status: 'success' | 'error' | 'timeout' | 'cancelled' }> {
    const entry = this.entry(call.name);
    if (!entry) return { success: false, output: null, error: `Tool not found: ${call.name}`, status: 'error' };
    const args = decodeStructuredStrings(call.arguments, entry.tool.parameters);
    if (!entry.validate(args)) {
      const fields = describeErrors(entry.validate.errors ?? []);
      const summary = fields.map((f) => `${f.field} ${f.problem}`).join('; ');
      return {
        success: false,
        output: { error_code: 'invalid_arguments', invalid_arguments: fields },
        error: `Invalid arguments for ${entry.tool.name}: ${summary}. Nothing was run; ask the person for what is missing, or correct the arguments.`,
        status: 'error',
      };
    }
    const timeoutMs = entry.tool.timeoutMs ?? this.defaultTimeoutMs;
    const controller = new AbortController();
    const onAbort = () => controller.abort(ctx.signal.reason);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    let countdown: Countdown | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      countdown = new Countdown(timeoutMs, () => resolve('timeout'));
    });
    const cancelled = new Promise<'cancelled'>((resolve) => controller.signal.addEventListener('abort', () => resolve('cancelled'), { once: true }));
    // The time a person takes to answer the tool's question is not the tool's.
    const elicit = ctx.elicit?.bind(ctx);
    const held: Partial<ToolContext> = elicit
      ? {
          elicit: async (prompt, signal) => {
            const release = countdown!.hold();
            try {
              return await elicit(prompt, signal);
            } finally {
              release();
            }
          },
        }
      : {};
    try {
      const outcome = await Promise.race([entry.tool.execute(args, { ...ctx, ...held, signal: controller.signal }), timeout, cancelled]);
      if (outcome === 'timeout') {
        controller.abort(new Error('tool timeout'));
        return { success: false, output: null, error: `Tool ${call.name} timed out after ${timeoutMs} ms`, status: 'timeout' };
      }
      if (outcome === 'cancelled') return { success: false, output: null, error: 'Cancelled', status: 'cancelled' };
      return { ...outcome, status: outcome.success ? 'success' : (outcome.status ?? 'error') };
    } catch (err) {
      return { success: false, output: null, error: err instanceof Error ? err.message : String(err), status: 'error' };
    } finally {
      countdown?.stop();
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }
}

/** One thing wrong with a call's arguments: the field (`orderId`, `items[0].sku`; `(arguments)` for the whole) and what. */
export interface InvalidArgument {
  field: string;
  problem: string;
}

/** ajv's errors as fields a person (or the model) can act on: a missing property is named as the field itself. */
function describeErrors(errors: readonly ErrorObject[]): InvalidArgument[] {
  return errors.map((e) => {
    const path = e.instancePath
      .split('/')
      .slice(1)
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
    const join = (name: string) => (path ? `${path}.${name}` : name);
    if (e.keyword === 'required') return { field: join(String(e.params.missingProperty)), problem: 'is required' };
    if (e.keyword === 'additionalProperties') return { field: join(String(e.params.additionalProperty)), problem: 'is not an argument of this tool' };
    return { field: path || '(arguments)', problem: e.message ?? 'is invalid' };
  });
}

/**
 * Tag calls carry every value as a string: a JSON string where the schema wants an object
 * or array is decoded (numbers and booleans are coerced by ajv).
 */
function decodeStructuredStrings(args: Record<string, unknown>, schema: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  let out = args;
  for (const [key, value] of Object.entries(args)) {
    const type = properties[key]?.type;
    const wantsStructure = type === 'object' || type === 'array' || (Array.isArray(type) && (type.includes('object') || type.includes('array')));
    if (!wantsStructure || typeof value !== 'string') continue;
    try {
      out = { ...out, [key]: JSON.parse(value) };
    } catch {
      /* left as is; validation names the field */
    }
  }
  return out;
}
