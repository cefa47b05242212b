import 'reflect-metadata';
import { validateSync } from 'class-validator';
import { parseByteSize } from './byte-size.js';

type Kind = 'string' | 'int' | 'number' | 'bool' | 'list' | 'bytes';

interface EnvBinding {
  property: string;
  variable: string;
  kind: Kind;
}

const BINDINGS = Symbol('env-bindings');

/** Binds a config property to an environment variable; `--flag-name` overrides it on the command line. */
export function Env(variable: string, kind: Kind = 'string'): PropertyDecorator {
  return (target, property) => {
    const list: EnvBinding[] = Reflect.getMetadata(BINDINGS, target) ?? [];
    Reflect.defineMetadata(BINDINGS, [...list, { property: String(property), variable, kind }], target);
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

/** DATAAGENT_MYSQL_HOST → --mysql-host; OPENAI_BASE_URL → --openai-base-url. */
export function flagName(variable: string): string {
  return '--' + variable.replace(/^DATAAGENT_/, '').toLowerCase().replace(/_/g, '-');
}

/** Parses `--name=value` and `--name value` pairs. */
export function parseFlags(argv: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) continue;
    const eq = arg.indexOf('=');
    if (eq > 0) flags.set(arg.slice(0, eq), arg.slice(eq + 1));
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) flags.set(arg, argv[++i]);
    else flags.set(arg, 'true');
  }
  return flags;
}

function coerce(raw: string, kind: Kind): unknown {
  switch (kind) {
    case 'int':
      return /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
    case 'number':
      return raw.trim() !== '' && !Number.isNaN(Number(raw)) ? Number(raw) : raw;
    case 'bool':
      if (/^(true|1|yes|on)$/i.test(raw.trim())) return true;
      if (/^(false|0|no|off)$/i.test(raw.trim())) return false;
      return raw;
    case 'list':
      return raw.split(',').map((s) => s.trim()).filter(Boolean);
    case 'bytes':
      return parseByteSize(raw) ?? raw;
    default:
      return raw;
  }
}

/**
 * Builds and validates a config class from the environment and command-line flags
 * (flags win). Properties keep their initialiser as the default.
 * @throws ConfigError naming each bad variable, what it must be and what it was.
 */
export function loadConfig<T extends object>(
  ctor: new () => T,
  env: NodeJS.ProcessEnv = process.env,
  argv: readonly string[] = process.argv.slice(2),
): T {
  const config = new ctor();
  const bindings: EnvBinding[] = Reflect.getMetadata(BINDINGS, ctor.prototype) ?? [];
  const flags = parseFlags(argv);
  const sources = new Map<string, string>();
  for (const b of bindings) {
    const flag = flagName(b.variable);
    const raw = flags.get(flag) ?? env[b.variable];
    if (raw === undefined || raw === '') continue;
    (config as Record<string, unknown>)[b.property] = coerce(raw, b.kind);
    sources.set(b.property, flags.has(flag) ? flag : b.variable);
  }
  const errors = validateSync(config, { forbidUnknownValues: false });
  if (errors.length > 0) {
    const problems = errors.map((e) => {
      const binding = bindings.find((b) => b.property === e.property);
      const name = sources.get(e.property) ?? binding?.variable ?? e.property;
      const secret = /KEY|PASSWORD|SECRET|TOKEN/.test(binding?.variable ?? '');
      const got = secret ? '(hidden)' : JSON.stringify(redactUrlCredentials(e.value));
      // class-validator starts its default messages with the property name; the variable says it better.
      const messages = Object.values(e.constraints ?? {}).map((m) => m.replace(new RegExp(`^${e.property} `), ''));
      return `${name}: ${messages.join('; ')} (got ${got})`;
    });
    throw new ConfigError(problems);
  }
  return config;
}

/**
 * Hides the user name and password of URLs (`redis://:***@host:6379`), in a string or each
 * string of a list, so a bad value can be shown. Meant for values that failed validation, so
 * it does not rely on them parsing: everything between `scheme://` and the last `@` is user
 * info, even where a URL parser would end the authority sooner (an unescaped `/` or `#` in a
 * password), at the cost of hiding a little more than needed.
 */
export function redactUrlCredentials(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactUrlCredentials);
  if (typeof value !== 'string') return value;
  const m = /^(\s*[a-z][a-z0-9+.-]*:\/\/)(.*)@/is.exec(value);
  if (!m) return value;
  const userInfo = m[2]!;
  const colon = userInfo.indexOf(':');
  const hide = (part: string) => (part === '' ? '' : '***');
  const shown = colon < 0 ? hide(userInfo) : `${hide(userInfo.slice(0, colon))}:${hide(userInfo.slice(colon + 1))}`;
  return `${m[1]}${shown}@${value.slice(m[0].length)}`;
}

/**
 * Loads several config classes and reports the problems of all of them at once.
 * @throws ConfigError listing every bad value.
 */
export function loadConfigs<T extends Record<string, new () => object>>(
  classes: T,
  env: NodeJS.ProcessEnv = process.env,
  argv: readonly string[] = process.argv.slice(2),
): { [K in keyof T]: InstanceType<T[K]> } {
  const out: Record<string, object> = {};
  const problems: string[] = [];
  for (const [key, ctor] of Object.entries(classes)) {
    try {
      out[key] = loadConfig(ctor, env, argv);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems.filter((p) => !problems.includes(p)));
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as { [K in keyof T]: InstanceType<T[K]> };
}
