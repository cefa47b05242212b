import type { Tool } from '../tool.js';

export const TAVILY_SEARCH_URL = 'https://api.tavily.com/search';

export interface WebSearchToolOptions {
  /** Search endpoint (Tavily's, or a compatible one). Default {@link TAVILY_SEARCH_URL}. */
  endpoint?: string;
  timeoutMs?: number;
}

interface TavilyResult {
  title?: string;
  url?: string;
  content?: string;
  score?: number;
  published_date?: string;
}

/**
 * The `web_search` tool over the Tavily search API.
 * @param apiKey the TAVILY_API_KEY; without one there is no tool.
 * @returns the tool, or null when no key is configured (do not register it then).
 */
export function createWebSearchTool(apiKey?: string, options: WebSearchToolOptions = {}): Tool | null {
  if (!apiKey) return null;
  const endpoint = options.endpoint ?? TAVILY_SEARCH_URL;
  const timeoutMs = options.timeoutMs ?? 20_000;
  return {
    name: 'web_search',
    readOnly: true,
    description: 'Search the web. Returns the best matching pages with title, URL and an extract, and a short answer when one is available.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1 },
        max_results: { type: 'integer', minimum: 1, maximum: 20, description: 'Default 5' },
        topic: { type: 'string', enum: ['general', 'news', 'finance'], description: 'Default general' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    timeoutMs: timeoutMs + 1_000,
    async execute(args, ctx) {
      const query = String(args.query);
      let response: Response;
      try {
        response = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
          body: JSON.stringify({ query, max_results: args.max_results ?? 5, topic: args.topic ?? 'general', search_depth: 'basic', include_answer: true }),
          signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]),
        });
      } catch (err) {
        const reason = ctx.signal.aborted ? 'cancelled' : (err as Error).name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : 'could not reach the search service';
        return { success: false, output: null, error: `Web search failed: ${reason}` };
      }
      const text = await response.text().catch(() => '');
      if (!response.ok) {
        // Never echo request headers: the key must not reach the model or the event log.
        const detail = text.length > 300 ? `${text.slice(0, 300)}…` : text;
        return { success: false, output: { status_code: response.status }, error: `Web search failed: HTTP ${response.status}${detail ? ` ${detail.replaceAll(apiKey, '***')}` : ''}` };
      }
      let data: { answer?: string; results?: TavilyResult[] };
      try {
        data = JSON.parse(text) as typeof data;
      } catch {
        return { success: false, output: null, error: 'Web search failed: the service did not answer JSON' };
      }
      const results = (data.results ?? []).map((r) => ({
        title: r.title ?? '',
        url: r.url ?? '',
        content: r.content ?? '',
        ...(typeof r.score === 'number' ? { score: r.score } : {}),
        ...(r.published_date ? { published_date: r.published_date } : {}),
      }));
      return { success: true, output: { query, ...(data.answer ? { answer: data.answer } : {}), results } };
    },
  };
}
