import path from 'node:path';
import { RE2JS } from 're2js';
import type { Caller } from '../../auth/caller.js';
import { FileOpTracker, fileOperationEvent } from '../../workspace/file-op-tracker.js';
import type { Workspace } from '../../workspace/workspace.js';
import { WorkspaceError, WorkspaceHardLinkError, WorkspacePermissionError } from '../../workspace/workspace-errors.js';
import { formatBytes } from '../../llm/byte-budget.js';
import type { Tool, ToolContext, ToolResult } from '../tool.js';
import { DEFAULT_TOOL_RESULT_MAX_BYTES } from '../tool-output-cap.js';
import { MAX_PATTERN_CHARS, checkPatternLength, compileGlob } from './workspace-glob.js';

const MAX_LIST_ENTRIES = 1_000;
const MAX_LINE_CHARS = 2_000;
const GREP_MAX_FILE_BYTES = 5 * 1024 * 1024;
/** Hard-linked files a grep names as skipped; past these it only counts them. */
const GREP_MAX_REFUSED_SHOWN = 5;
/** Bytes of a tool result kept free on a read_file page for the note saying how to go on. */
const PAGE_NOTE_ROOM = 256;

export interface FileToolsOptions {
  /** The cap on one tool result (DATAAGENT_TOOL_RESULT_MAX_BYTES): a read_file page fits in it. */
  resultMaxBytes?: number;
}

const PATH_HINT = 'Paths are relative to your workspace root, which holds files/, uploads/ (what the user uploaded) and outputs/ (put results here).';

/** Failures become tool results the model can read; workspace errors keep their code. */
function failure(err: unknown): ToolResult {
  if (err instanceof WorkspaceError) return { success: false, output: { error_code: err.code }, error: err.message };
  return { success: false, output: null, error: err instanceof Error ? err.message : String(err) };
}

function tool(
  definition: Omit<Tool, 'execute'>,
  run: (args: Record<string, unknown>, ws: Workspace, ctx: ToolContext) => Promise<unknown>,
  workspaceFor: (caller: Caller) => Workspace,
): Tool {
  return {
    ...definition,
    async execute(args, ctx) {
      try {
        return { success: true, output: await run(args, workspaceFor(ctx.caller), ctx) };
      } catch (err) {
        return failure(err);
      }
    },
  };
}

/** Glob patterns are matched against workspace-relative paths, so they cannot point elsewhere. */
function checkPattern(pattern: string): void {
  if (path.isAbsolute(pattern) || pattern.split(/[\\/]/).includes('..') || pattern.includes('\0')) {
    throw new WorkspacePermissionError(`${pattern}: patterns must be relative to the workspace and must not contain '..'`);
  }
}

/**
 * The model's regular expression as an RE2 program: matching takes time linear in the text, so no
 * pattern can freeze the worker the way `^(a+)+$` does in a backtracking engine.
 * @throws WorkspaceError `bad_pattern` when it is too long or not valid RE2 syntax.
 */
function compileRegex(pattern: string, ignoreCase: boolean): RE2JS {
  checkPatternLength(pattern, 'regular expression');
  try {
    return RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    throw new WorkspaceError(
      'bad_pattern',
      `invalid regular expression: ${(err as Error).message}. Patterns use RE2 syntax (as in Go or ripgrep): no backreferences such as \\1, no lookahead (?=…) (?!…) or lookbehind (?<=…) (?<!…)`,
    );
  }
}

const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const int = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isInteger(v) ? v : fallback);

/**
 * The workspace file tools: `ls`, `read_file`, `write_file`, `edit_file`, `glob`, `grep`. Each
 * call works in the caller's own workspace, never another user's; writes and edits emit a
 * `file_operation` event with the unified diff. `write_file` and `edit_file` are sensitive.
 */
export function createFileTools(workspaceFor: (caller: Caller) => Workspace, options: FileToolsOptions = {}): Tool[] {
  const tracker = new FileOpTracker({ historyLimit: 0 });
  const pageBytes = Math.max(1, (options.resultMaxBytes ?? DEFAULT_TOOL_RESULT_MAX_BYTES) - PAGE_NOTE_ROOM);

  const ls = tool(
    {
      name: 'ls',
      readOnly: true,
      description: `List a folder of the workspace (default: the root). ${PATH_HINT}`,
      parameters: { type: 'object', properties: { path: { type: 'string', description: 'Folder to list, default "."' } }, additionalProperties: false },
    },
    async (args, ws) => {
      const { path: dir, entries: all } = await ws.list(str(args.path, '.'));
      const entries = all.slice(0, MAX_LIST_ENTRIES);
      return { path: ws.relative(dir), entries, ...(all.length > MAX_LIST_ENTRIES ? { truncated: true, total: all.length } : {}) };
    },
    workspaceFor,
  );

  const readFileTool = tool(
    {
      name: 'read_file',
      readOnly: true,
      description: `Read a text file of the workspace, as numbered lines, up to ${formatBytes(pageBytes)} per call. Use offset and limit to page through long files. ${PATH_HINT}`,
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          offset: { type: 'integer', minimum: 0, description: 'First line to return, 0-based (default 0)' },
          limit: { type: 'integer', minimum: 1, maximum: 10_000, description: 'Lines to return (default 2000)' },
        },
        required: ['path'],
        additionalProperties: false,
      },
    },
    async (args, ws) => {
      const { text } = await ws.readText(str(args.path));
      if (text === '') return '(empty file)';
      const lines = text.split('\n');
      if (text.endsWith('\n')) lines.pop();
      const offset = int(args.offset, 0);
      const limit = int(args.limit, 2_000);
      if (offset >= lines.length) throw new WorkspaceError('bad_offset', `offset ${offset} is past the end of the file (${lines.length} lines)`);
      const page: string[] = [];
      let bytes = 0;
      let fullPage = false;
      for (let i = offset; i < Math.min(lines.length, offset + limit); i++) {
        const shown = lines[i]!.length > MAX_LINE_CHARS ? `${lines[i]!.slice(0, MAX_LINE_CHARS)}… (line cut)` : lines[i]!;
        const numbered = `${String(i + 1).padStart(6)}\t${shown}`;
        bytes += Buffer.byteLength(numbered) + 1;
        if (bytes > pageBytes && page.length > 0) {
          fullPage = true;
          break;
        }
        page.push(numbered);
      }
      const rest = lines.length - offset - page.length;
      if (rest === 0) return page.join('\n');
      const next = offset + page.length;
      return page.join('\n') + (fullPage ? `\n(page full at ${formatBytes(pageBytes)}: ${rest} more lines; continue with offset ${next})` : `\n(${rest} more lines; continue with offset ${next})`);
    },
    workspaceFor,
  );

  const writeFileTool = tool(
    {
      name: 'write_file',
      idempotent: true,
      description: `Create or overwrite a text file in the workspace (parent folders are created). ${PATH_HINT}`,
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' } },
        required: ['path', 'content'],
        additionalProperties: false,
      },
      sensitive: true,
    },
    async (args, ws, ctx) => {
      const { path: abs, before, after } = await ws.modifyText(str(args.path), () => str(args.content));
      const record = tracker.track(before === null ? 'create' : 'write', ws.relative(abs), before, after);
      ctx.emit((envelope) => fileOperationEvent(envelope, record));
      return `${before === null ? 'Created' : 'Wrote'} ${record.path} (${Buffer.byteLength(after)} bytes, +${record.stats.additions} -${record.stats.deletions} lines)`;
    },
    workspaceFor,
  );

  const editFile = tool(
    {
      name: 'edit_file',
      description: `Replace an exact string in a workspace file. old_string must occur exactly once unless replace_all is true; include enough surrounding text to make it unique. ${PATH_HINT}`,
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          old_string: { type: 'string', minLength: 1 },
          new_string: { type: 'string' },
          replace_all: { type: 'boolean', description: 'Replace every occurrence (default false)' },
        },
        required: ['path', 'old_string', 'new_string'],
        additionalProperties: false,
      },
      sensitive: true,
    },
    async (args, ws, ctx) => {
      const oldString = str(args.old_string);
      const newString = str(args.new_string);
      if (oldString === '') throw new WorkspaceError('bad_edit', 'old_string must not be empty');
      if (oldString === newString) throw new WorkspaceError('bad_edit', 'old_string and new_string are the same');
      let count = 0;
      const { path: abs, before, after } = await ws.modifyText(str(args.path), (current) => {
        if (current === null) throw new WorkspaceError('not_found', `${str(args.path)}: no such file`);
        count = current.split(oldString).length - 1;
        if (count === 0) throw new WorkspaceError('not_found', `old_string not found in ${str(args.path)}`);
        if (count > 1 && args.replace_all !== true) {
          throw new WorkspaceError('ambiguous_edit', `old_string occurs ${count} times in ${str(args.path)}; add surrounding context to make it unique, or set replace_all`);
        }
        return args.replace_all === true ? current.split(oldString).join(newString) : current.replace(oldString, () => newString);
      });
      const record = tracker.track('edit', ws.relative(abs), before, after);
      ctx.emit((envelope) => fileOperationEvent(envelope, record));
      return `Edited ${record.path}: ${count} replacement${count === 1 ? '' : 's'} (+${record.stats.additions} -${record.stats.deletions} lines)`;
    },
    workspaceFor,
  );

  const glob = tool(
    {
      name: 'glob',
      readOnly: true,
      description: `Find workspace files whose path matches a glob pattern such as "**/*.csv" or "outputs/*.md" (*, ?, ** for any folders, [abc], {a,b}). ${PATH_HINT}`,
      parameters: {
        type: 'object',
        properties: {
          pattern: { type: 'string', minLength: 1, maxLength: MAX_PATTERN_CHARS },
          path: { type: 'string', description: 'Folder to search from, default "."' },
        },
        required: ['pattern'],
        additionalProperties: false,
      },
    },
    async (args, ws, ctx) => {
      const pattern = str(args.pattern);
      checkPattern(pattern);
      const matcher = compileGlob(pattern);
      const base = await ws.resolve(str(args.path, '.'));
      const matches: string[] = [];
      let truncated = false;
      for await (const entry of ws.walk(base)) {
        if (ctx.signal.aborted) break;
        if (entry.type !== 'file') continue;
        if (!matcher.test(path.relative(base, entry.path).split(path.sep).join('/'))) continue;
        if (matches.length >= MAX_LIST_ENTRIES) {
          truncated = true;
          break;
        }
        matches.push(ws.relative(entry.path));
      }
      return { matches: matches.sort(), ...(truncated ? { truncated: true } : {}) };
    },
    workspaceFor,
  );

  const grep = tool(
    {
      name: 'grep',
      readOnly: true,
      description: `Search workspace text files for a regular expression in RE2 syntax (as in Go or ripgrep: no backreferences, no lookahead or lookbehind); answers path:line: text. ${PATH_HINT}`,
      parameters: {
        type: 'object',
        properties: {
          pattern: { type: 'string', minLength: 1, maxLength: MAX_PATTERN_CHARS, description: 'Regular expression, RE2 syntax' },
          path: { type: 'string', description: 'File or folder to search, default "."' },
          glob: { type: 'string', maxLength: MAX_PATTERN_CHARS, description: 'Only files whose path (relative to path) matches, e.g. "**/*.py"' },
          ignore_case: { type: 'boolean' },
          max_results: { type: 'integer', minimum: 1, maximum: 1_000, description: 'Default 100' },
        },
        required: ['pattern'],
        additionalProperties: false,
      },
    },
    async (args, ws, ctx) => {
      const regex = compileRegex(str(args.pattern), args.ignore_case === true);
      const filter = typeof args.glob === 'string' ? args.glob : undefined;
      if (filter) checkPattern(filter);
      const filterMatcher = filter ? compileGlob(filter) : undefined;
      const maxResults = int(args.max_results, 100);
      const startStat = await ws.stat(str(args.path, '.'));
      if (!startStat) throw new WorkspaceError('not_found', `${str(args.path, '.')}: no such file or folder`);
      const start = startStat.path;
      const startIsFile = startStat.type === 'file';
      const files = startIsFile ? [{ path: start, size: startStat.size }] : ws.walk(start);
      const passesFilter = (file: string): boolean => {
        if (!filterMatcher) return true;
        const relative = path.relative(start, file).split(path.sep).join('/');
        // A filter without a slash matches file names in any folder ("*.py").
        return filterMatcher.test(filter!.includes('/') && relative ? relative : path.basename(file));
      };
      const out: string[] = [];
      const refused: string[] = [];
      for await (const entry of files) {
        if (ctx.signal.aborted || out.length >= maxResults) break;
        if ('type' in entry && entry.type !== 'file') continue;
        if (entry.size > GREP_MAX_FILE_BYTES) continue;
        if (!passesFilter(entry.path)) continue;
        let text: string;
        try {
          text = (await ws.readText(ws.relative(entry.path), GREP_MAX_FILE_BYTES)).text;
        } catch (err) {
          // Binary, vanished, or a symlink out: not searchable. A hard-linked file is refused, and the model told so.
          if (!(err instanceof WorkspaceHardLinkError)) continue;
          if (startIsFile) throw err;
          refused.push(err.message);
          continue;
        }
        const lines = text.split('\n');
        // RE2 is linear in the line, so the whole line is searched; only what is shown is cut.
        for (let i = 0; i < lines.length && out.length < maxResults; i++) {
          const line = lines[i]!;
          if (regex.test(line)) out.push(`${ws.relative(entry.path)}:${i + 1}: ${line.length > 500 ? `${line.slice(0, 500)}…` : line}`);
        }
      }
      const notes = refused.slice(0, GREP_MAX_REFUSED_SHOWN).map((message) => `(skipped ${message})`);
      if (refused.length > GREP_MAX_REFUSED_SHOWN) notes.push(`(skipped ${refused.length - GREP_MAX_REFUSED_SHOWN} more hard-linked files)`);
      const found = out.length === 0 ? 'No matches' : out.join('\n') + (out.length >= maxResults ? `\n(stopped at ${maxResults} matches)` : '');
      return [found, ...notes].join('\n');
    },
    workspaceFor,
  );

  return [ls, readFileTool, writeFileTool, editFile, glob, grep];
}
