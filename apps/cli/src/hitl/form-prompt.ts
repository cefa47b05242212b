/**
 * An MCP server's form asked field by field at the terminal: what each prompt says, and what
 * the typed line means. Pure, tested beside this file.
 */

export interface PromptField {
  name: string;
  label: string;
  description: string;
  kind: 'string' | 'number' | 'integer' | 'boolean' | 'choice' | 'multi';
  required: boolean;
  default?: unknown;
  /** A choice's values and their labels. */
  options: Array<{ value: string; label: string }>;
}

/** The form's fields in the schema's order. */
export function promptFields(schema: Record<string, unknown> | undefined): PromptField[] {
  const properties = (schema?.properties && typeof schema.properties === 'object' ? schema.properties : {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  return Object.entries(properties).map(([name, field]) => {
    const options = optionsOf(field) ?? optionsOf((field.items ?? {}) as Record<string, unknown>) ?? [];
    const type = String(field.type);
    const kind: PromptField['kind'] = type === 'array' ? 'multi' : options.length > 0 ? 'choice' : type === 'boolean' || type === 'number' || type === 'integer' ? type : 'string';
    return {
      name,
      label: typeof field.title === 'string' && field.title ? field.title : name,
      description: typeof field.description === 'string' ? field.description : '',
      kind,
      required: required.has(name),
      ...(field.default !== undefined ? { default: field.default } : {}),
      options,
    };
  });
}

function optionsOf(field: Record<string, unknown>): Array<{ value: string; label: string }> | null {
  if (Array.isArray(field.enum)) {
    const names = Array.isArray(field.enumNames) ? (field.enumNames as string[]) : [];
    return (field.enum as string[]).map((value, i) => ({ value, label: names[i] ?? value }));
  }
  const titled = (Array.isArray(field.oneOf) ? field.oneOf : Array.isArray(field.anyOf) ? field.anyOf : null) as Array<{ const: string; title?: string }> | null;
  return titled ? titled.map((c) => ({ value: c.const, label: c.title ?? c.const })) : null;
}

/** The prompt of a field: its label, what it takes, and what an empty line gives. */
export function promptLine(field: PromptField): string {
  const takes =
    field.kind === 'boolean'
      ? 'y/n'
      : field.kind === 'choice'
        ? field.options.map((o, i) => `${i + 1}) ${o.label}`).join('  ')
        : field.kind === 'multi'
          ? `${field.options.map((o, i) => `${i + 1}) ${o.label}`).join('  ')}, several with commas`
          : field.kind;
  const empty = field.default !== undefined ? `Enter: ${Array.isArray(field.default) ? field.default.join(', ') : String(field.default)}` : field.required ? 'required' : 'Enter: skip';
  return `${field.label} (${takes}; ${empty})`;
}

/**
 * What a typed line means for a field: its value; no value for an empty line (the schema's
 * default fills it, or it stays out); or why the line does not fit.
 */
export function readAnswer(field: PromptField, line: string): { ok: true; value?: unknown } | { ok: false; problem: string } {
  const text = line.trim();
  if (text === '') return field.required && field.default === undefined ? { ok: false, problem: `${field.label} is required` } : { ok: true };
  switch (field.kind) {
    case 'boolean':
      if (/^(y|yes|true|1)$/i.test(text)) return { ok: true, value: true };
      if (/^(n|no|false|0)$/i.test(text)) return { ok: true, value: false };
      return { ok: false, problem: 'answer y or n' };
    case 'number':
    case 'integer': {
      const value = Number(text);
      if (!Number.isFinite(value) || (field.kind === 'integer' && !Number.isInteger(value))) return { ok: false, problem: `a${field.kind === 'integer' ? 'n integer' : ' number'} is needed` };
      return { ok: true, value };
    }
    case 'choice': {
      const chosen = choose(field, text);
      return chosen ? { ok: true, value: chosen } : { ok: false, problem: `one of ${field.options.map((o) => o.value).join(', ')} (or its number)` };
    }
    case 'multi': {
      const parts = text.split(',').map((p) => p.trim()).filter(Boolean);
      const chosen = parts.map((p) => choose(field, p));
      return chosen.every((c) => c !== null) ? { ok: true, value: chosen } : { ok: false, problem: `each of ${field.options.map((o) => o.value).join(', ')} (or its number)` };
    }
    default:
      return { ok: true, value: line };
  }
}

/** A choice by its value, its label or its number from 1; null when it is none. */
function choose(field: PromptField, text: string): string | null {
  const n = Number(text);
  if (Number.isInteger(n) && n >= 1 && n <= field.options.length) return field.options[n - 1]!.value;
  return field.options.find((o) => o.value === text || o.label.toLowerCase() === text.toLowerCase())?.value ?? null;
}
