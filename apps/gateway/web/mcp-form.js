/**
 * The MCP tab's form as plain data: filled from a Claude Desktop style example, turned into the
 * body of POST /users/{user_id}/mcp-servers. Pure, unit tested beside this file.
 */

/** A form with nothing entered: a stdio server. */
export function emptyForm() {
  return { name: '', kind: 'stdio', command: '', args: '', env: '', url: '', headers: '', description: '', keywords: '' };
}

/** Something the person typed that cannot be read; `field` names the form field. */
export class FormInputError extends Error {
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

/**
 * Reads `{"mcpServers": {"name": {"command", "args", "env"} | {"url", "headers"}}}` (the format
 * Claude Desktop and most MCP servers' READMEs use) into the form: the first server, with the
 * names of all of them.
 * @throws FormInputError (field `example`) when the text is not such a configuration.
 */
export function parseExample(text) {
  let config;
  try {
    config = JSON.parse(text);
  } catch (err) {
    throw new FormInputError('example', `The example is not valid JSON: ${err.message}`);
  }
  const servers = config && typeof config === 'object' ? config.mcpServers : undefined;
  if (!servers || typeof servers !== 'object' || Array.isArray(servers)) {
    throw new FormInputError('example', 'Expected {"mcpServers": {"name": {...}}}');
  }
  const names = Object.keys(servers);
  if (names.length === 0) throw new FormInputError('example', 'mcpServers is empty');
  const name = names[0];
  const entry = servers[name];
  if (!entry || typeof entry !== 'object') throw new FormInputError('example', `mcpServers.${name} must be an object`);
  const form = { ...emptyForm(), name, description: stringOf(entry.description) };
  if (Array.isArray(entry.trigger_keywords)) form.keywords = entry.trigger_keywords.map(String).join(', ');
  if (typeof entry.url === 'string') {
    form.kind = 'remote';
    form.url = entry.url;
    form.headers = pairsToLines(entry.headers, ': ');
  } else if (typeof entry.command === 'string') {
    form.command = entry.command;
    form.args = Array.isArray(entry.args) ? entry.args.map(String).join('\n') : '';
    form.env = pairsToLines(entry.env, '=');
  } else {
    throw new FormInputError('example', `mcpServers.${name} needs a "command" (stdio) or a "url" (remote)`);
  }
  return { form, names };
}

/**
 * Reads a pasted configuration as it will be POSTed: the gateway reads its shape (one server,
 * `{"mcpServers": {…}}` or the bare map) and checks each server, so nothing is converted here.
 * @throws FormInputError (field `example`) when the text is not JSON.
 */
export function readPastedConfig(text) {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new FormInputError('example', `The example is not valid JSON: ${err.message}`);
  }
}

/**
 * What the gateway answered to a pasted configuration, as lines for the person: `added` names
 * the servers registered, `refused` says why each other one was not.
 * @param answer the 201/207 body (`{added, refused}`, or one server when the paste was a single
 * server), or the details of an `mcp_servers_refused` error (`{added: [], refused}`).
 */
export function pasteOutcome(answer) {
  const added = Array.isArray(answer?.added) ? answer.added : answer?.name ? [answer] : [];
  const refused = Array.isArray(answer?.refused) ? answer.refused : [];
  const note = added.length > 0 ? `Added ${added.map((s) => s.name).join(', ')}.` : null;
  const errors = refused.map((r) => {
    const fields = r.details?.fields && typeof r.details.fields === 'object' ? Object.entries(r.details.fields).map(([f, m]) => ` (${f}: ${[].concat(m).join('; ')})`).join('') : '';
    return `${r.name}: ${r.message}${fields}`;
  });
  return { note, errors };
}

/**
 * The request body for the form: only the fields of its kind, blank ones left out.
 * @throws FormInputError naming the field when an env or header line cannot be read.
 */
export function formToServer(form) {
  const body = { name: form.name.trim() };
  if (form.kind === 'remote') {
    body.url = form.url.trim();
    const headers = linesToPairs(form.headers, ':', 'headers', 'Name: value');
    if (Object.keys(headers).length > 0) body.headers = headers;
  } else {
    body.command = form.command.trim();
    const args = form.args.split('\n').map((a) => a.trim()).filter(Boolean);
    if (args.length > 0) body.args = args;
    const env = linesToPairs(form.env, '=', 'env', 'KEY=value');
    if (Object.keys(env).length > 0) body.env = env;
  }
  if (form.description.trim()) body.description = form.description.trim();
  const keywords = form.keywords.split(',').map((k) => k.trim()).filter(Boolean);
  if (keywords.length > 0) body.trigger_keywords = keywords;
  return body;
}

function linesToPairs(text, separator, field, shape) {
  const pairs = {};
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line) continue;
    const at = line.indexOf(separator);
    if (at <= 0) throw new FormInputError(field, `${field} line ${i + 1} should read ${shape}`);
    pairs[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return pairs;
}

function pairsToLines(pairs, separator) {
  if (!pairs || typeof pairs !== 'object') return '';
  return Object.entries(pairs).map(([k, v]) => `${k}${separator}${String(v)}`).join('\n');
}

function stringOf(value) {
  return typeof value === 'string' ? value : '';
}
