#!/usr/bin/env node
/**
 * Writes docs/configuration.md from the `@Env('NAME', kind)` declarations in the sources, so
 * the reference cannot drift from what `loadConfig` reads. Run it with `npm run docs:config`;
 * test/config-docs.test.ts fails when the file is stale.
 *
 * It reads the TypeScript sources, not dist/: every non-spec `.ts` file under apps/ and libs/
 * that declares `@Env(…)`, one section per config class. A property's TSDoc is its meaning,
 * its initialiser its default (constants are followed through the type checker), and a
 * `@defaultValue` tag overrides the default where it depends on the host or on `npm start`.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CONFIG_DOC = 'docs/configuration.md';

/** The non-spec TypeScript files under apps/ and libs/ that declare an `@Env` binding, sorted. */
function envFiles(root) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts')) {
        if (readFileSync(path, 'utf8').includes('@Env(')) found.push(path);
      }
    }
  };
  for (const top of ['libs', 'apps']) walk(join(root, top));
  return found.sort((a, b) => rank(root, a) - rank(root, b) || a.localeCompare(b));
}

/** The shared settings first (libs/core/src/config, settings.ts leading), then the other libraries, then the apps. */
function rank(root, file) {
  const path = relative(root, file).split(sep).join('/');
  if (path === 'libs/core/src/config/settings.ts') return 0;
  if (path.startsWith('libs/core/src/config/')) return 1;
  return path.startsWith('libs/') ? 2 : 3;
}

/** The value of a default's expression, following constants to their declarations. */
function evaluate(node, checker, where) {
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) return evaluate(node.expression, checker, where);
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (ts.isArrayLiteralExpression(node)) return node.elements.map((e) => evaluate(e, checker, where));
  if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken) return -evaluate(node.operand, checker, where);
  if (ts.isBinaryExpression(node)) {
    const [a, b] = [evaluate(node.left, checker, where), evaluate(node.right, checker, where)];
    switch (node.operatorToken.kind) {
      case ts.SyntaxKind.AsteriskToken: return a * b;
      case ts.SyntaxKind.AsteriskAsteriskToken: return a ** b;
      case ts.SyntaxKind.PlusToken: return a + b;
      case ts.SyntaxKind.MinusToken: return a - b;
      case ts.SyntaxKind.SlashToken: return a / b;
    }
  }
  if (ts.isIdentifier(node)) {
    let symbol = checker.getSymbolAtLocation(node);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    const declaration = symbol?.valueDeclaration;
    if (declaration && ts.isVariableDeclaration(declaration) && declaration.initializer) return evaluate(declaration.initializer, checker, where);
  }
  throw new Error(`${where}: cannot work out the default \`${node.getText()}\`; give the property a @defaultValue tag`);
}

/** A default as the reference shows it: byte sizes in KiB/MiB/GiB where they divide evenly. */
function showDefault(value, kind) {
  if (value === undefined) return 'none';
  if (value === '' || (Array.isArray(value) && value.length === 0)) return 'empty';
  if (Array.isArray(value)) return `\`${value.join(',')}\``;
  if (kind === 'bytes' && typeof value === 'number') {
    for (const [unit, size] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]]) {
      if (value >= size && value % size === 0) return `\`${value / size}${unit}\``;
    }
  }
  return `\`${String(value)}\``;
}

/** A TSDoc comment's text on one line, safe inside a Markdown table cell. */
function oneLine(text) {
  return text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');
}

/** The `@defaultValue` tag of a declaration, if it has one. */
function defaultTag(node) {
  const tag = ts.getJSDocTags(node).find((t) => t.tagName.text === 'defaultValue');
  return tag ? ts.getTextOfJSDocComment(tag.comment) ?? '' : undefined;
}

/** `DATAAGENT_MYSQL_HOST` → `--mysql-host`, as `flagName` in libs/core/src/config/env.ts. */
function flagName(variable) {
  return '--' + variable.replace(/^DATAAGENT_/, '').toLowerCase().replace(/_/g, '-');
}

/** The processes that load config classes, and the object naming the classes each loads. */
const READERS = [
  ['gateway', 'apps/gateway/src/infra/gateway-config.ts', 'GATEWAY_CONFIGS'],
  ['worker', 'apps/worker/src/infra/worker-config.ts', 'WORKER_CONFIGS'],
];

/** Class name → the processes that load it, read from the `*_CONFIGS` objects of READERS. */
function readersOf(root) {
  const readers = new Map();
  for (const [process, path, constant] of READERS) {
    const source = ts.createSourceFile(path, readFileSync(join(root, path), 'utf8'), ts.ScriptTarget.ES2022, true);
    let found = false;
    const visit = (node) => {
      if (ts.isVariableDeclaration(node) && node.name.getText() === constant && node.initializer && ts.isObjectLiteralExpression(node.initializer)) {
        found = true;
        for (const property of node.initializer.properties) {
          const value = ts.isPropertyAssignment(property) ? property.initializer : ts.isShorthandPropertyAssignment(property) ? property.name : undefined;
          if (value && ts.isIdentifier(value)) readers.set(value.text, [...(readers.get(value.text) ?? []), process]);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    if (!found) throw new Error(`${path}: no object literal ${constant}; update READERS in scripts/gen-config-docs.mjs`);
  }
  return readers;
}

/** Every config class with its `@Env` properties, in source order. */
export function readConfigClasses(root = ROOT) {
  const files = envFiles(root);
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    experimentalDecorators: true,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const readers = readersOf(root);
  const classes = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    const path = relative(root, file).split(sep).join('/');
    for (const statement of source.statements) {
      if (!ts.isClassDeclaration(statement) || !statement.name) continue;
      const entries = [];
      for (const member of statement.members) {
        if (!ts.isPropertyDeclaration(member)) continue;
        const env = (ts.getDecorators(member) ?? []).map((d) => d.expression).find((e) => ts.isCallExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === 'Env');
        if (!env) continue;
        const [name, kindArg] = env.arguments;
        const where = `${path}: ${statement.name.text}.${member.name.getText()}`;
        if (!name || !ts.isStringLiteral(name)) throw new Error(`${where}: @Env takes the variable's name as a string literal`);
        const kind = kindArg && ts.isStringLiteral(kindArg) ? kindArg.text : 'string';
        const symbol = checker.getSymbolAtLocation(member.name);
        const description = symbol ? ts.displayPartsToString(symbol.getDocumentationComment(checker)) : '';
        const tagged = defaultTag(member);
        const value = tagged !== undefined ? undefined : member.initializer ? evaluate(member.initializer, checker, where) : undefined;
        entries.push({ variable: name.text, kind, default: tagged ?? showDefault(value, kind), description: oneLine(description), property: member.name.getText() });
      }
      if (entries.length === 0) continue;
      const classSymbol = checker.getSymbolAtLocation(statement.name);
      const summary = classSymbol ? ts.displayPartsToString(classSymbol.getDocumentationComment(checker)) : '';
      classes.push({ name: statement.name.text, path, summary: summary.replace(/\s+/g, ' ').trim(), readBy: readers.get(statement.name.text) ?? [], entries });
    }
  }
  return classes;
}

/** The text of docs/configuration.md. */
export function renderConfigReference(root = ROOT) {
  const classes = readConfigClasses(root);
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated by `npm run docs:config` (scripts/gen-config-docs.mjs) from the @Env declarations in the code.',
    '     Edit the TSDoc of the config classes, then run it again; test/config-docs.test.ts fails when this file is stale. -->',
    '',
    'Every setting is an environment variable, validated at startup: a bad value stops the process',
    'with exit code 2 and a message naming the variable. Each can also be given as a command-line',
    'flag, which wins: drop `DATAAGENT_`, lowercase, `_` → `-` (`DATAAGENT_PORT` → `--port 9000`,',
    '`DATAAGENT_LOG_LEVEL` → `--log-level debug`, `OPENAI_BASE_URL` → `--openai-base-url …`).',
    'Byte sizes take units (`500MB`, `2GiB`); lists are comma-separated.',
    '',
    `${classes.reduce((n, c) => n + c.entries.length, 0)} variables in ${classes.length} groups, one per config class:`,
    '',
    ...classes.map((c) => `- [${c.name}](#${c.name.toLowerCase()}): ${c.entries.map((e) => `\`${e.variable}\``).join(', ')}`),
    '',
  ];
  for (const c of classes) {
    lines.push(`## ${c.name}`, '');
    if (c.summary) lines.push(c.summary, '');
    const readBy = c.readBy.length > 0 ? ` Read by the ${c.readBy.join(' and the ')}.` : '';
    lines.push(`Declared in [${c.path}](../${c.path}).${readBy}`, '');
    lines.push('| Variable | Flag | Type | Default | Meaning |', '|---|---|---|---|---|');
    for (const e of c.entries) lines.push(`| \`${e.variable}\` | \`${flagName(e.variable)}\` | ${e.kind} | ${e.default} | ${e.description} |`);
    lines.push('');
  }
  return lines.join('\n');
}

/**
 * `node scripts/gen-config-docs.mjs [--check] [--root DIR]`: writes the reference, or with
 * `--check` compares it in memory with the file and exits 1, saying what to run, when they differ.
 */
function main(argv) {
  const at = argv.indexOf('--root');
  const root = at >= 0 ? argv[at + 1] : ROOT;
  const text = renderConfigReference(root);
  const target = join(root, CONFIG_DOC);
  if (!argv.includes('--check')) {
    writeFileSync(target, text);
    console.log(`wrote ${CONFIG_DOC}`);
    return 0;
  }
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // A missing file is stale too.
  }
  if (current === text) return 0;
  const [have, want] = [current.split('\n'), text.split('\n')];
  const line = want.findIndex((l, i) => l !== have[i]);
  console.error(`${CONFIG_DOC} is stale: it does not match the @Env declarations (first difference at line ${line + 1}:\n  file:      ${have[line] ?? '(end of file)'}\n  generated: ${want[line] ?? '(end of file)'}).\nRun \`npm run docs:config\` and commit the result.`);
  return 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main(process.argv.slice(2));
