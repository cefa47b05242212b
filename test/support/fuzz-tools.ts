/**
 * Fuzzed tool calls for the scripted model: workspace paths (traversal, absolute, NUL, encoded,
 * long, unicode, symlinks out), regular expressions (catastrophic and invalid), glob bombs,
 * sizes, and loopback-only URLs; plus the oracle that says whether a call's path leaves the
 * workspace, and the loopback server the outbound tools may reach.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import fc from 'fast-check';
import { assertLoopbackOnly, field, jsonTree, loopbackUrl, numberLike, obj, objectBody, oddString, toJsonText, type Json } from './fuzz-arbitraries.js';

export interface ToolCall {
  name: string;
  /** A JSON object, or raw text that is not valid JSON (sent verbatim as the arguments). */
  args: Json | { raw: string };
}

/** The arguments as the scripted model sends them after `[[tool:NAME `. */
export function argsText(call: ToolCall): string {
  return isRaw(call.args) ? call.args.raw : toJsonText(call.args);
}

function isRaw(args: ToolCall['args']): args is { raw: string } {
  return args !== null && typeof args === 'object' && !Array.isArray(args) && 'raw' in args;
}

/** Every URL inside a call's arguments (any key named url, at any depth): each must be loopback. */
export function assertCallLoopbackOnly(call: ToolCall): void {
  for (const m of argsText(call).matchAll(/"url"\s*:\s*("(?:[^"\\]|\\.)*")/g)) assertLoopbackOnly(JSON.parse(m[1]) as string);
}

/**
 * Whether a tool call, as the tool received it, names a path outside the workspace: the path as
 * written, resolved against the workspace root, lies elsewhere. (Percent-encoded and backslash
 * spellings name odd files inside on Linux; they are refused too, but opening them is no escape.)
 */
export function leavesWorkspace(toolArgs: unknown, wsRoot: string): boolean {
  if (toolArgs === null || typeof toolArgs !== 'object') return false;
  const p = (toolArgs as { path?: unknown }).path;
  if (typeof p !== 'string' || p.includes('\0')) return false;
  const abs = path.resolve(wsRoot, p);
  return abs !== wsRoot && !abs.startsWith(wsRoot + path.sep);
}

export interface ToolFixture {
  /** Absolute workspace root of the fuzzing user. */
  wsRoot: string;
  /** A folder above the workspace that holds the canary files. */
  fuzzRoot: string;
  /** File name that exists only outside the workspace. */
  outsideOnly: string;
  /** Loopback ports: the allowlisted target and the canary that must never be reached. */
  ports: number[];
}

/** Tool calls grouped by what they exercise; each group is its own property. */
export function toolCallGroups(fx: ToolFixture): Record<string, fc.Arbitrary<ToolCall>> {
  const up = (n: number) => '../'.repeat(n);
  const inside = fc.constantFrom('files/notes.txt', 'files/redos.txt', 'files/data.csv', 'files', '.', '', 'files/sub/deep.txt', 'files/sub', 'outputs', 'uploads', 'files/link-out', 'files/dir-out', 'files/dir-out/outside-secret.txt', 'files/rel-link-out', 'files/./../files/notes.txt', 'files/é😀.txt', 'files/new.txt', 'outputs/out.md', 'files/', 'files//notes.txt', '~', '~/x', '$HOME/x', path.join(fx.wsRoot, 'files', 'notes.txt'));
  /** Paths that leave the workspace; writes climb at most `maxUp` levels, which stays inside the suite's own temporary folder. */
  const escaping = (maxUp: number) =>
    fc.oneof(
      fc.tuple(fc.integer({ min: 1, max: maxUp }), fc.constantFrom('outside-secret.txt', `${fx.outsideOnly}.txt`, '', 'ws', 'outside-dir/x')).map(([n, rest]) => up(n) + rest),
      fc.constantFrom('files/../../outside-secret.txt', 'files/sub/../../../outside-secret.txt', '..', '../', '..\\..\\outside-secret.txt', '%2e%2e/outside-secret.txt', '%2e%2e%2f%2e%2e%2foutside-secret.txt', '%252e%252e%252foutside-secret.txt', '..%2foutside-secret.txt', '.%2e/outside-secret.txt'),
      fc.constantFrom(path.join(fx.fuzzRoot, 'deep', 'outside-secret.txt'), path.join(fx.fuzzRoot, 'deep', 'outside-dir'), `${fx.wsRoot}/../alice-x/y`, `${fx.fuzzRoot}/deep/./outside-secret.txt`, `${fx.wsRoot}/../../ws`),
    );
  const odd = fc.oneof(fc.constantFrom('files/a\u0000b', '\u0000', 'files/' + 'a'.repeat(5_000), 'a/'.repeat(2_000), 'files/%00', 'files/\ud800', 'files/\u202e.txt', ' ', '\\', 'files\\notes.txt', 'CON', 'files/.', 'files/..'), oddString.filter((s) => !s.includes('..') && !s.startsWith('/') && s.length < 10_000));
  const readPath = fc.oneof(
    { weight: 4, arbitrary: inside },
    { weight: 4, arbitrary: escaping(12) },
    // Reads only: a guard that failed would read these, and the secret scan would see it.
    { weight: 1, arbitrary: fc.constantFrom('/etc/passwd', '/proc/self/environ', '/proc/self/cmdline', `${up(14)}proc/self/environ`, '/dev/zero', '/dev/urandom') },
    { weight: 2, arbitrary: odd },
  );
  const writePath = fc.oneof({ weight: 4, arbitrary: inside }, { weight: 4, arbitrary: escaping(6) }, { weight: 2, arbitrary: odd });
  // Sizes mostly in range (so the call gets past its schema), sometimes anything.
  const size = fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 20_000 }).map<Json>((n) => ({ num: String(n) })) },
    { weight: 1, arbitrary: numberLike.filter((s) => /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(s)).map<Json>((num) => ({ num })) },
    { weight: 1, arbitrary: jsonTree },
  );
  const regex = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('^(a+)+$', '(a|aa)+$', '(a|a?)+$', '(.*a){12}', '^(\\w+\\s?)*$', '(x+x+)+y', '([a-zA-Z]+)*!$', '(a*)*b', '^(([a-z])+.)+[A-Z]([a-z])+$', '(\\s*)*$') },
    { weight: 2, arbitrary: fc.constantFrom('(', '[', '*', 'a{2,1}', '(?<', '\\', '(?P<x>a)', '[z-a]', 'a**', '\\k<x>', '(?<=a)b', '(a)\\1', '\\p{L}+', '(?i)hello', 'x'.repeat(10_000), '[\\s\\S]*'.repeat(50)) },
    { weight: 3, arbitrary: fc.constantFrom('hello', 'a', '.', '^', '$', '\\d+', 'é', '😀', 'line', '\\u0000', 'second') },
    { weight: 1, arbitrary: oddString },
  );
  const glob = fc.oneof(fc.constantFrom('**/*', '*', '**/*.txt', 'files/**', '../**', '../../**/*', '/etc/*', '{a,b}', '{1..100000}', '{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}{u,v}{w,x}', '**/**/**/**/**/**/**/**', '*'.repeat(1_000), '[', '!(x)', '+(a|b)', '@(a)', `**/${fx.outsideOnly}*`, '**/../**'), oddString);
  const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 2 });
  const entries = (list: Array<[string, Json | undefined]>): Json => obj(list.filter((e): e is [string, Json] => e[1] !== undefined));
  const str = (a: fc.Arbitrary<string>) => field(a as fc.Arbitrary<Json>, 8);
  const urls = loopbackUrl(fx.ports);
  const call = (name: string, args: fc.Arbitrary<Json>): fc.Arbitrary<ToolCall> => args.map((a) => ({ name, args: a }));

  const groups: Record<string, fc.Arbitrary<ToolCall>> = {
    'read_file, ls, glob': fc.oneof(
      call('read_file', fc.tuple(str(readPath), maybe(size), maybe(size)).map(([p, offset, limit]) => entries([['path', p], ['offset', offset], ['limit', limit]]))),
      call('ls', maybe(str(readPath)).map((p) => entries([['path', p]]))),
      call('glob', fc.tuple(str(glob), maybe(str(readPath))).map(([pattern, p]) => entries([['pattern', pattern], ['path', p]]))),
    ),
    grep: call('grep', fc.tuple(str(regex), maybe(fc.oneof(str(readPath), fc.constant<Json>('files/redos.txt'))), maybe(str(glob)), maybe(fc.boolean()), maybe(size)).map(([pattern, p, g, ic, max]) => entries([['pattern', pattern], ['path', p], ['glob', g], ['ignore_case', ic], ['max_results', max]]))),
    'write_file, edit_file': fc.oneof(
      call('write_file', fc.tuple(str(writePath), field(fc.oneof(fc.constantFrom<Json>('', 'text\n', 'é😀\n'), fc.constantFrom(1_000, 60_000).map<Json>((n) => 'w'.repeat(n))), 4)).map(([p, content]) => entries([['path', p], ['content', content]]))),
      call('edit_file', fc.tuple(str(writePath), field(fc.constantFrom<Json>('hello', 'world', '', 'a', '\n'), 4), field(fc.constantFrom<Json>('HELLO', '', 'x'.repeat(1_000)), 4), maybe(field(fc.boolean(), 3))).map(([p, o, n, all]) => entries([['path', p], ['old_string', o], ['new_string', n], ['replace_all', all]]))),
    ),
    // Arguments mostly of the right shape (the schemas refuse stray keys), so calls reach the guard.
    'fetch_url, http_request': fc.oneof(
      call('fetch_url', fc.tuple(str(urls), maybe(size)).map(([url, max]) => entries([['url', url], ['max_chars', max]]))),
      call(
        'http_request',
        fc
          .tuple(
            str(urls),
            maybe(field(fc.constantFrom<Json>('GET', 'get', 'POST', 'HEAD', 'DELETE', 'PUT', 'TRACE', 'CONNECT', 'PROPFIND', 'G ET', ''), 4)),
            maybe(field(fc.constantFrom<Json>(obj([['Host', 'evil.example']]), obj([['x', 'a\r\nInjected: 1']]), obj([['Content-Length', '999']]), obj([['Transfer-Encoding', 'chunked']]), obj([['Accept', 'text/html']]), obj([['x', obj([])]])), 2)),
            maybe(jsonTree),
          )
          .map(([url, method, headers, body]) => entries([['url', url], ['method', method], ['headers', headers], ['body', body]])),
      ),
    ),
    'odd names and broken arguments': fc.oneof(
      fc.tuple(fc.constantFrom('read_file', 'grep', 'http_request', 'write_file', 'ls'), fc.constantFrom('{"path": "files/notes.txt"', '{"path": files}', '{}}', '{"pattern": "(a+)+$", }', '{"url": "http://127.0.0.1:1/"', '{"path":"\\ud800"}', '{"path":1e999}', '{"path":"files/notes.txt","path":"../outside-secret.txt"}')).map(([name, raw]) => ({ name, args: { raw } })),
      fc.tuple(fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'READ_FILE', 'read-file', 'shell', 'web_search', 'run_skill', 'read_skill', 'remember', 'write_todos_', 'x'.repeat(200)), jsonTree).map(([name, args]) => ({ name, args: args !== null && typeof args === 'object' && !Array.isArray(args) && 'obj' in args ? args : obj([['value', args]]) })),
      // Known tools with stray and prototype keys beside their arguments.
      fc.tuple(fc.constantFrom('read_file', 'ls', 'grep', 'fetch_url', 'http_request', 'write_file'), objectBody({ path: fc.constantFrom<Json>('files/notes.txt', '../outside-secret.txt'), pattern: fc.constant<Json>('hello'), url: urls as fc.Arbitrary<Json>, content: fc.constant<Json>('x') })).map(([name, args]) => ({ name, args })),
    ),
  };
  // Lone UTF-16 surrogates anywhere in the arguments are a class of their own, so that what they
  // break does not hide everything else.
  const lone = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;
  const out: Record<string, fc.Arbitrary<ToolCall>> = {};
  for (const [name, arb] of Object.entries(groups)) out[name] = arb.filter((c) => !lone.test(argsText(c)));
  const surrogate = fc.constantFrom('\ud800', '\udfff', 'a\udc00b', '\ud83d');
  out['lone surrogates in arguments'] = fc.oneof(
    call('read_file', surrogate.map((x) => entries([['path', `files/${x}`]]))),
    call('grep', surrogate.map((x) => entries([['pattern', x], ['path', 'files']]))),
    call('write_file', surrogate.map((x) => entries([['path', `outputs/${x}.txt`], ['content', x]]))),
    call('fetch_url', fc.tuple(surrogate, fc.constantFrom(...fx.ports)).map(([x, p]) => entries([['url', `http://127.0.0.1:${p}/${x}`]]))),
    call('ls', surrogate.map((x) => entries([['path', '.'], [x, x]]))),
  );
  return out;
}

/** The loopback server the outbound tools may reach (allowlisted): pages of every kind; redirects go only to the canary on loopback. */
export function targetAnswer(req: IncomingMessage, res: ServerResponse, canaryPort: () => number, slowMs: number): void {
  const p = (req.url ?? '/').split('?')[0];
  req.resume();
  if (p === '/html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>t</title><script>x()</script></head><body><h1>Hi</h1><p>para</p></body></html>');
  if (p === '/json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":[1,2,{"b":null}]}');
  if (p === '/big') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('z'.repeat(2 * 1024 * 1024));
  if (p === '/binary') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(randomBytes(1024));
  if (p === '/slow') return void setTimeout(() => res.end('late'), slowMs).unref();
  if (p.startsWith('/redirect')) return void res.writeHead(302, { location: `http://127.0.0.1:${canaryPort()}/from-redirect` }).end();
  const status = /^\/status\/(\d{3})$/.exec(p);
  if (status) return void res.writeHead(Number(status[1]), { 'content-type': 'text/plain' }).end(`status ${status[1]}`);
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`target ${p.slice(0, 100)}`);
}
