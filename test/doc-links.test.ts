import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Every relative link in README.md, apps/*\/README.md and docs/**\/*.md resolves: the file (or
 * folder) exists and, for a Markdown file, the `#anchor` is one of its headings as GitHub names
 * them. External links (http, https, mailto, …) are not fetched. Links inside code (fenced
 * blocks and `inline spans`) are text, not links.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The Markdown files the check reads, relative to `root`. */
function markdownFiles(root: string): string[] {
  const files = ['README.md'];
  for (const app of readdirSync(join(root, 'apps'))) {
    if (existsSync(join(root, 'apps', app, 'README.md'))) files.push(`apps/${app}/README.md`);
  }
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  if (existsSync(join(root, 'docs'))) walk('docs');
  return files;
}

/** Lines outside fenced code blocks, with inline code spans blanked. */
function prose(text: string): string[] {
  let fence: string | null = null;
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      continue;
    }
    if (fence === null) out.push(line.replace(/(`+)[\s\S]*?\1/g, ''));
  }
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function headingAnchor(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a Markdown file has: its headings (a repeated one gets -1, -2, …) and HTML ids. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      continue;
    }
    if (fence !== null) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = headingAnchor(heading);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

/** The link targets of a Markdown text: inline links and images, reference definitions, HTML href and src. */
function linkTargets(text: string): string[] {
  const out: string[] = [];
  for (const line of prose(text)) {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1]!);
    const definition = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (definition) out.push(definition[1]!);
    for (const m of line.matchAll(/\b(?:href|src)="([^"]+)"/g)) out.push(m[1]!);
  }
  return out;
}

/** Each relative link of the files under `root` that does not resolve, as `file: target (why)`. */
function brokenLinks(root: string): string[] {
  const files = markdownFiles(root);
  const anchors = new Map<string, Set<string>>();
  const anchorsFor = (file: string): Set<string> => {
    if (!anchors.has(file)) anchors.set(file, anchorsOf(readFileSync(file, 'utf8')));
    return anchors.get(file)!;
  };
  const broken: string[] = [];
  for (const file of files) {
    const path = join(root, file);
    for (const target of linkTargets(readFileSync(path, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      const hash = target.indexOf('#');
      const filePart = decodeURIComponent(hash >= 0 ? target.slice(0, hash) : target).replace(/\?.*$/, '');
      const anchor = hash >= 0 ? decodeURIComponent(target.slice(hash + 1)) : null;
      const resolved = filePart === '' ? path : resolve(dirname(path), filePart);
      if (!resolved.startsWith(root + sep) && resolved !== root) {
        broken.push(`${file}: ${target} (points outside the repository)`);
        continue;
      }
      if (!existsSync(resolved)) {
        broken.push(`${file}: ${target} (no such file: ${relative(root, resolved)})`);
        continue;
      }
      if (anchor !== null && resolved.endsWith('.md') && statSync(resolved).isFile() && !anchorsFor(resolved).has(anchor)) {
        broken.push(`${file}: ${target} (no heading #${anchor} in ${relative(root, resolved)})`);
      }
    }
  }
  return broken;
}

describe('links in the README and docs/', () => {
  it('resolve: every relative file and #anchor exists', () => {
    const broken = brokenLinks(ROOT);
    if (broken.length > 0) throw new Error(`${broken.length} broken link(s):\n  ${broken.join('\n  ')}`);
    expect(markdownFiles(ROOT)).toEqual(expect.arrayContaining(['README.md', 'docs/configuration.md', 'apps/cli/README.md', 'apps/harbor/README.md']));
  });

  it('are reported when a file, a heading or an anchor in another file is missing, and code is not read as links', () => {
    const root = mkdtempSync(join(tmpdir(), 'dataagent-doc-links-'));
    try {
      mkdirSync(join(root, 'docs', 'sub'), { recursive: true });
      mkdirSync(join(root, 'apps', 'cli'), { recursive: true });
      writeFileSync(join(root, 'docs', 'guide.md'), '# The Guide: `npm start`\n\n## Step 2 (optional)\n\n## Step 2 (optional)\n\nBack to [the README](../README.md#quick-start).\n');
      writeFileSync(join(root, 'docs', 'sub', 'deep.md'), '# Deep\n\n[up](../guide.md#step-2-optional-1) [missing](../nowhere.md)\n');
      writeFileSync(join(root, 'apps', 'cli', 'README.md'), '# CLI\n\n[guide](../../docs/guide.md#the-guide-npm-start) [bad](../../docs/guide.md#step-3)\n');
      writeFileSync(
        join(root, 'README.md'),
        [
          '# Title',
          '## Quick start',
          '[ok](docs/guide.md) [self](#quick-start) [ext](https://example.com/nowhere) [dir](docs/sub)',
          '[gone](#no-such-heading) [file](docs/missing.md#x) ![img](docs/shot.png)',
          '`[code](docs/not-a-link.md)`',
          '```',
          '[fenced](docs/not-a-link-either.md)',
          '```',
        ].join('\n'),
      );
      expect(brokenLinks(root).sort()).toEqual([
        'README.md: #no-such-heading (no heading #no-such-heading in README.md)',
        'README.md: docs/missing.md#x (no such file: docs/missing.md)',
        'README.md: docs/shot.png (no such file: docs/shot.png)',
        'apps/cli/README.md: ../../docs/guide.md#step-3 (no heading #step-3 in docs/guide.md)',
        'docs/sub/deep.md: ../nowhere.md (no such file: docs/nowhere.md)',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
