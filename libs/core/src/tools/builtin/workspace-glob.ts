import { RE2JS } from 're2js';
import { WorkspaceError } from '../../workspace/workspace-errors.js';

/** The longest regular expression or glob the file tools take from the model: longer ones are refused. */
export const MAX_PATTERN_CHARS = 1_000;

/**
 * Compiles a glob into an RE2 program matched against a whole `/`-separated relative path.
 * RE2 matches in time linear in the path whatever the pattern; minimatch compiles to backtracking
 * RegExps, where `*a*a*a*a*a*a*a*a*b` against a 60-character name blocks the event loop for seconds,
 * and brace expansion grows exponentially (`{a,b}{a,b}…`). Syntax: `*` and `?` within one folder
 * level, `**` as a whole level (any number of folders), `[abc]`, `[!abc]`, `{a,b}` (nested),
 * `\` to escape. Dotfiles match like any other name.
 * @throws WorkspaceError `bad_pattern` when the pattern is longer than {@link MAX_PATTERN_CHARS}
 * or is not a valid glob.
 */
export function compileGlob(glob: string): RE2JS {
  checkPatternLength(glob, 'glob');
  try {
    return RE2JS.compile(`^(?:${globToRe2(glob)})$`, RE2JS.DOTALL);
  } catch (err) {
    throw new WorkspaceError('bad_pattern', `invalid glob ${JSON.stringify(glob)}: ${(err as Error).message}`);
  }
}

/** @throws WorkspaceError `bad_pattern` when `pattern` is longer than {@link MAX_PATTERN_CHARS}. */
export function checkPatternLength(pattern: string, what: string): void {
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new WorkspaceError('bad_pattern', `the ${what} is ${pattern.length} characters long; at most ${MAX_PATTERN_CHARS} are accepted`);
  }
}

function globToRe2(glob: string): string {
  const braces = pairedBraces(glob);
  let out = '';
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\' && i + 1 < glob.length) {
      out += RE2JS.quote(glob[++i]!);
    } else if (c === '*') {
      const wholeLevel = (i === 0 || glob[i - 1] === '/') && glob[i + 1] === '*' && (i + 2 === glob.length || glob[i + 2] === '/');
      if (wholeLevel && i + 2 === glob.length) {
        out += '.*';
        i++;
      } else if (wholeLevel) {
        out += '(?:[^/]*/)*';
        i += 2;
      } else {
        while (glob[i + 1] === '*') i++;
        out += '[^/]*';
      }
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[' && classEnd(glob, i) !== -1) {
      const end = classEnd(glob, i);
      out += classToRe2(glob.slice(i + 1, end));
      i = end;
    } else if (c === '{' && braces.has(i)) {
      out += '(?:';
      depth++;
    } else if (c === '}' && braces.has(i)) {
      out += ')';
      depth--;
    } else if (c === ',' && depth > 0) {
      out += '|';
    } else {
      out += RE2JS.quote(c);
    }
  }
  return out;
}

/** Indexes of the `{` and `}` that pair up; an unpaired one is a literal character. */
function pairedBraces(glob: string): Set<number> {
  const paired = new Set<number>();
  const open: number[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '\\') i++;
    else if (c === '[' && classEnd(glob, i) !== -1) i = classEnd(glob, i);
    else if (c === '{') open.push(i);
    else if (c === '}' && open.length > 0) paired.add(open.pop()!).add(i);
  }
  return paired;
}

/** Index of the `]` closing the class that opens at `start`, or -1 when it is not closed. */
function classEnd(glob: string, start: number): number {
  let i = start + 1;
  if (glob[i] === '!' || glob[i] === '^') i++;
  if (glob[i] === ']') i++;
  for (; i < glob.length; i++) {
    if (glob[i] === '\\') i++;
    else if (glob[i] === '[' && glob[i + 1] === ':') {
      const close = glob.indexOf(':]', i + 2);
      if (close !== -1) i = close + 1;
    } else if (glob[i] === ']') return i;
  }
  return -1;
}

/** A glob class body (`!a-z`, `abc`) as an RE2 class that never matches `/`. */
function classToRe2(body: string): string {
  const negated = body[0] === '!' || body[0] === '^';
  let out = '';
  for (let i = negated ? 1 : 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\' && i + 1 < body.length) {
      const escaped = body[++i]!;
      out += /[\\\]\[^-]/.test(escaped) ? `\\${escaped}` : escaped;
    } else if (c === '[' && body[i + 1] === ':' && body.indexOf(':]', i + 2) !== -1) {
      const close = body.indexOf(':]', i + 2) + 2;
      out += body.slice(i, close);
      i = close - 1;
    } else {
      out += c === '[' || c === ']' || c === '^' ? `\\${c}` : c;
    }
  }
  return negated ? `[^/${out}]` : `[${out}]`;
}
