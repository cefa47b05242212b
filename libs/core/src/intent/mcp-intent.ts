/**
 * Layer 1 intent recognition for MCP tools, so the prompt carries only the tools a message needs: which servers and tools a
 * person's message points at, from rules compiled once per set of servers. Explicit calls ("用
 * weather 工具", "call github.search_issues", "use the jira tool") name a server or a tool;
 * trigger keywords ("天气", "pull request") point at a server. No match: no MCP intent, and no
 * MCP tool text goes into the prompt.
 */

/** What the recognizer knows of a server: its name, its trigger keywords and its tools' names. */
export interface IntentServer {
  name: string;
  triggerKeywords?: readonly string[];
  /** Tool names on the server (without `server.`). */
  tools: readonly string[];
}

export interface McpIntent {
  /** `server.tool` names the message points at, best first; empty: no MCP intent. */
  tools: string[];
  /** The rule that matched: `explicit` (a call pattern naming a server or tool), `mention` (a `server.tool` name), `keyword`, `classifier` (Layer 2), or `none`. */
  rule: 'explicit' | 'mention' | 'keyword' | 'classifier' | 'none';
  /** No match, but the message reads like a call ("帮我…一下", "use the … tool") that named nothing Layer 1 knows: a case for Layer 2. */
  unsure?: boolean;
}

/** Explicit call patterns, Chinese and English (Layer 1, priority 15). */
const EXPLICIT_PATTERNS = [
  /用.{0,40}?工具/,
  /调用\s*\S/,
  /使用.{0,40}?(服务|工具)/,
  /帮我.{1,40}?一下/,
  /\buse\s+(the\s+)?\S+(\s+\S+)?\s+(tool|server|service)\b/i,
  /\bcall\s+(the\s+)?\S/i,
  /\brun\s+\S+(\s+\S+)?\s+with\b/i,
  /\bwith\s+the\s+\S+\s+(tool|server)\b/i,
];

interface CompiledServer {
  name: string;
  tools: readonly string[];
  /** Matches the server's name as a word. */
  nameRule: RegExp;
  /** Each tool's name as a word (snake_case tools also as words: "get order" for get_order). */
  toolRules: Array<{ tool: string; rule: RegExp }>;
  keywordRules: RegExp[];
}

/** Recognizes MCP intent in messages; build one per set of servers (rules are compiled here, once). */
export class McpIntentRecognizer {
  private readonly servers: CompiledServer[];

  constructor(servers: readonly IntentServer[]) {
    this.servers = servers.map((s) => ({
      name: s.name,
      tools: s.tools,
      nameRule: wordRule(s.name),
      toolRules: s.tools.map((tool) => ({ tool, rule: wordRule(tool) })),
      keywordRules: (s.triggerKeywords ?? []).filter((k) => k.trim() !== '').map((k) => wordRule(k.trim())),
    }));
  }

  recognize(message: string): McpIntent {
    // A `server.tool` (or wire `server__tool`) written out is the clearest call of all.
    const mentioned: string[] = [];
    for (const s of this.servers) {
      for (const tool of s.tools) {
        const lower = message.toLowerCase();
        if (lower.includes(`${s.name}.${tool}`.toLowerCase()) || lower.includes(`${s.name}__${tool}`.toLowerCase())) mentioned.push(`${s.name}.${tool}`);
      }
    }
    const named: string[] = [];
    const callLike = EXPLICIT_PATTERNS.some((p) => p.test(message));
    if (callLike) {
      for (const s of this.servers) {
        const tools = s.toolRules.filter((t) => t.rule.test(message)).map((t) => `${s.name}.${t.tool}`);
        if (s.nameRule.test(message)) named.push(...(tools.length > 0 ? tools : s.tools.map((t) => `${s.name}.${t}`)));
        else named.push(...tools);
      }
    }
    if (mentioned.length > 0 || named.length > 0) return { tools: unique([...mentioned, ...named]), rule: mentioned.length > 0 ? 'mention' : 'explicit' };

    const byKeyword: string[] = [];
    for (const s of this.servers) {
      if (!s.keywordRules.some((k) => k.test(message)) && !(s.keywordRules.length > 0 && s.nameRule.test(message))) continue;
      // Within a matched server, tools the message names come first.
      const named = s.toolRules.filter((t) => t.rule.test(message)).map((t) => t.tool);
      byKeyword.push(...[...named, ...s.tools.filter((t) => !named.includes(t))].map((t) => `${s.name}.${t}`));
    }
    if (byKeyword.length > 0) return { tools: unique(byKeyword), rule: 'keyword' };
    return callLike ? { tools: [], rule: 'none', unsure: true } : { tools: [], rule: 'none' };
  }
}

/**
 * A word or phrase, case-insensitive, `_`, `-` and spaces alike ("get order" for get_order).
 * Latin text must stand as a word ("git" is not in "digital"), though CJK may touch it ("用jira服务");
 * CJK text has no spaces between words, so it matches anywhere.
 */
function wordRule(text: string): RegExp {
  const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/[\s_-]+/g, '[\\s_-]+');
  return /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(text) ? new RegExp(escaped, 'iu') : new RegExp(`(?<![\\p{Script=Latin}\\p{N}])${escaped}(?![\\p{Script=Latin}\\p{N}])`, 'iu');
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}
