// @ts-check
/**
 * An MCP server's form (an elicitation's `requested_schema`) as fields to show, and what the
 * person filled in as the answer's content. Pure: no DOM, tested beside this file.
 *
 * @typedef {import('./elicitation-form.js').FormField} FormField
 */

/**
 * The form's fields in the schema's order: strings (a choice when they have `enum` or `oneOf`),
 * numbers, integers, booleans, and multiple choices, each with its title, description, default
 * and bounds.
 * @param {Record<string, any> | undefined} schema
 * @returns {FormField[]}
 */
export function formFields(schema) {
  const properties = schema && typeof schema.properties === 'object' ? schema.properties : {};
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  return Object.entries(properties).map(([name, field]) => {
    const options = optionsOf(field);
    const kind = field.type === 'array' ? 'multi' : options ? 'choice' : field.type === 'boolean' ? 'boolean' : field.type === 'integer' || field.type === 'number' ? field.type : 'string';
    return {
      name,
      kind,
      label: typeof field.title === 'string' && field.title ? field.title : name,
      description: typeof field.description === 'string' ? field.description : '',
      required: required.has(name),
      default: field.default,
      options: options ?? optionsOf(field.items ?? {}) ?? [],
      format: typeof field.format === 'string' ? field.format : null,
      min: field.minimum ?? field.minLength ?? field.minItems ?? null,
      max: field.maximum ?? field.maxLength ?? field.maxItems ?? null,
    };
  });
}

/** `[{value, label}]` of a field's choices (`enum` with `enumNames`, `oneOf` or `anyOf` of titled consts); null when it has none. */
function optionsOf(field) {
  if (Array.isArray(field.enum)) return field.enum.map((value, i) => ({ value, label: Array.isArray(field.enumNames) && field.enumNames[i] ? field.enumNames[i] : value }));
  const titled = Array.isArray(field.oneOf) ? field.oneOf : Array.isArray(field.anyOf) ? field.anyOf : null;
  return titled ? titled.map((c) => ({ value: c.const, label: c.title ?? c.const })) : null;
}

/**
 * The values a form opens with: each field's default, or empty.
 * @param {FormField[]} fields
 * @returns {Record<string, any>}
 */
export function initialValues(fields) {
  return Object.fromEntries(fields.map((f) => [f.name, f.default ?? (f.kind === 'boolean' ? false : f.kind === 'multi' ? [] : '')]));
}

/**
 * The answer's content from what the form holds: numbers as numbers, booleans as booleans, and
 * an empty text or number field left out, so the gateway fills its default (or says it is required).
 * @param {FormField[]} fields
 * @param {Record<string, any>} values
 * @returns {Record<string, unknown>}
 */
export function formContent(fields, values) {
  /** @type {Record<string, unknown>} */
  const content = {};
  for (const field of fields) {
    const value = values[field.name];
    if (field.kind === 'boolean') content[field.name] = value === true;
    else if (field.kind === 'multi') content[field.name] = Array.isArray(value) ? value : [];
    else if (value === undefined || value === null || String(value).trim() === '') continue;
    else if (field.kind === 'number' || field.kind === 'integer') content[field.name] = Number.isFinite(Number(value)) ? Number(value) : value;
    else content[field.name] = String(value);
  }
  return content;
}
