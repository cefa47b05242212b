import type { Dirent } from 'node:fs';
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

/** One skill folder: `SKILL.md` (front matter + instructions) and optional `scripts/`. */
export interface Skill {
  /** Lowercase letters, digits and inner hyphens; equals the folder name. */
  readonly name: string;
  /** One line telling the model when the skill applies. */
  readonly description: string;
  /** Absolute path of the skill's folder. */
  readonly dir: string;
  /** SKILL.md after its front matter: the instructions `read_skill` returns. */
  readonly body: string;
  /** Regular files under `scripts/`, relative to it with `/` separators, sorted. */
  readonly scripts: readonly string[];
  /** The other front-matter fields (e.g. `license`), as written. */
  readonly metadata: Readonly<Record<string, string>>;
}

/** Largest SKILL.md read; skills are prompt text, not data. */
const MAX_SKILL_MD_BYTES = 256 * 1024;
const MAX_DESCRIPTION_CHARS = 1024;
const MAX_SCRIPTS = 200;
const MAX_SCRIPT_DEPTH = 4;
const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * The skills found in one folder. Loading never throws for a bad skill:
 * it is left out and a warning naming it and the problem is kept in {@link warnings}.
 */
export class SkillCatalog {
  private readonly byName: ReadonlyMap<string, Skill>;

  private constructor(
    /** Absolute path of the folder the skills came from. */
    readonly dir: string,
    skills: readonly Skill[],
    /** One line per skill (or folder) that was skipped, saying why. */
    readonly warnings: readonly string[],
  ) {
    this.byName = new Map(skills.map((s) => [s.name, s]));
  }

  /**
   * Reads every `<dir>/<skill>/SKILL.md`. A missing `dir` gives an empty catalog with a warning.
   * @param dir folder with one subfolder per skill.
   * @returns the catalog; skipped skills are listed in `warnings`.
   */
  static async load(dir: string): Promise<SkillCatalog> {
    const root = path.resolve(dir);
    const warnings: string[] = [];
    let entries: Dirent[];
    try {
      entries = await readdir(root, { withFileTypes: true });
    } catch (err) {
      return new SkillCatalog(root, [], [`${root}: cannot read the skills folder (${(err as NodeJS.ErrnoException).code ?? String(err)})`]);
    }
    const skills: Skill[] = [];
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (entry.name.startsWith('.')) continue;
      const skillDir = path.join(root, entry.name);
      if (!(await stat(skillDir).catch(() => null))?.isDirectory()) continue;
      const loaded = await loadSkill(skillDir);
      if (typeof loaded === 'string') warnings.push(`${entry.name}: ${loaded}`);
      else skills.push(loaded);
    }
    return new SkillCatalog(root, skills, warnings);
  }

  /** Every loaded skill, sorted by name. */
  list(): Skill[] {
    return [...this.byName.values()];
  }

  /** The skill called `name`, or undefined. */
  get(name: string): Skill | undefined {
    return this.byName.get(name);
  }
}

/** The skill in `skillDir`, or why it was skipped. */
async function loadSkill(skillDir: string): Promise<Skill | string> {
  const file = path.join(skillDir, 'SKILL.md');
  const info = await lstat(file).catch(() => null);
  if (!info) return 'no SKILL.md';
  if (!info.isFile()) return 'SKILL.md is not a regular file';
  if (info.size > MAX_SKILL_MD_BYTES) return `SKILL.md is ${info.size} bytes, more than ${MAX_SKILL_MD_BYTES}`;
  const parsed = parseFrontMatter(await readFile(file, 'utf8'));
  if (typeof parsed === 'string') return `SKILL.md: ${parsed}`;
  const { fields, body } = parsed;
  const { name, description, ...metadata } = fields;
  const folder = path.basename(skillDir);
  if (!name) return 'SKILL.md: front matter has no "name"';
  if (name.length > 64 || !NAME_PATTERN.test(name)) return `SKILL.md: name "${name}" must be lowercase letters, digits and single hyphens, at most 64 characters`;
  if (name !== folder) return `SKILL.md: name "${name}" differs from its folder name "${folder}"`;
  if (!description?.trim()) return 'SKILL.md: front matter has no "description"';
  if (description.length > MAX_DESCRIPTION_CHARS) return `SKILL.md: description is longer than ${MAX_DESCRIPTION_CHARS} characters`;
  return { name, description: description.trim(), dir: skillDir, body: body.trim(), scripts: await listScripts(path.join(skillDir, 'scripts')), metadata };
}

/**
 * Splits `---\nkey: value\n---\nbody`. Deliberately strict: one `key: value` per line, the
 * value plain, "double-quoted" (JSON escapes) or 'single-quoted'; no nesting, lists or
 * multi-line scalars, so a skill never means something other than what it appears to say.
 * @returns the fields and body, or what is wrong.
 */
export function parseFrontMatter(text: string): { fields: Record<string, string>; body: string } | string {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') return 'no front matter (the file must start with a line "---")';
  const end = lines.findIndex((line, i) => i > 0 && line.trimEnd() === '---');
  if (end < 0) return 'front matter is not closed by a line "---"';
  const fields: Record<string, string> = {};
  for (let i = 1; i < end; i++) {
    const line = lines[i]!;
    if (!line.trim() || /^\s*#/.test(line)) continue;
    const at = `front matter line ${i + 1}`;
    if (/^\s/.test(line)) return `${at}: indented or multi-line values are not supported`;
    const m = /^([A-Za-z][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*))?$/.exec(line);
    if (!m) return `${at}: expected "key: value"`;
    const key = m[1]!;
    if (key in fields) return `${at}: "${key}" appears twice`;
    const value = parseScalar((m[2] ?? '').trim());
    if (value === null) return `${at}: "${key}" has a value this parser does not accept (use one line of plain or quoted text)`;
    fields[key] = value;
  }
  return { fields, body: lines.slice(end + 1).join('\n') };
}

function parseScalar(raw: string): string | null {
  if (raw.startsWith('"')) {
    try {
      const value: unknown = JSON.parse(raw);
      return typeof value === 'string' ? value : null;
    } catch {
      return null;
    }
  }
  if (raw.startsWith("'")) {
    if (raw.length < 2 || !raw.endsWith("'")) return null;
    const inner = raw.slice(1, -1);
    return inner.replaceAll("''", '').includes("'") ? null : inner.replaceAll("''", "'");
  }
  // YAML would read these as something other than a plain string.
  if (/^[[\]{}|>&*!%@`]/.test(raw)) return null;
  return raw.replace(/\s+#.*$/, '');
}

async function listScripts(scriptsDir: string): Promise<string[]> {
  if (!(await lstat(scriptsDir).catch(() => null))?.isDirectory()) return [];
  const found: string[] = [];
  const visit = async (dir: string, depth: number): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (found.length >= MAX_SCRIPTS || entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.isFile()) found.push(path.relative(scriptsDir, full).split(path.sep).join('/'));
      else if (entry.isDirectory() && depth < MAX_SCRIPT_DEPTH) await visit(full, depth + 1);
    }
  };
  await visit(scriptsDir, 1);
  return found.sort();
}
