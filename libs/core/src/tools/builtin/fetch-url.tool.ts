import TurndownService from 'turndown';
import type { Tool } from '../tool.js';
import { outboundFailure } from './http-request.tool.js';
import { guardedFetch, type GuardedFetchOptions } from './net/guarded-fetch.js';

export interface FetchUrlToolOptions extends GuardedFetchOptions {
  /** Default cap on the Markdown handed to the model. Default 50,000 characters. */
  maxChars?: number;
}

/** Converts an HTML page to Markdown, dropping scripts, styles and other non-content. */
export function htmlToMarkdown(html: string): { title?: string; markdown: string } {
  const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  turndown.remove(['script', 'style', 'noscript', 'iframe', 'object', 'embed', 'template', 'head', 'svg', 'form']);
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]?.replace(/\s+/g, ' ').trim();
  const markdown = turndown.turndown(html).replace(/\n{3,}/g, '\n\n').trim();
  return { ...(title ? { title: decodeEntities(title) } : {}), markdown };
}

function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|apos);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'" })[e] ?? _m);
}

/**
 * The `fetch_url` tool: GETs a public web page through
 * {@link guardedFetch} and returns it as Markdown.
 */
export function createFetchUrlTool(options: FetchUrlToolOptions = {}): Tool {
  const defaultMax = options.maxChars ?? 50_000;
  return {
    name: 'fetch_url',
    readOnly: true,
    description: 'Fetch a public web page and return its content as Markdown (plain text and JSON are returned as they are).',
    parameters: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'Absolute http(s) URL' },
        max_chars: { type: 'integer', minimum: 100, maximum: 200_000, description: `Longest content returned (default ${defaultMax})` },
      },
      required: ['url'],
      additionalProperties: false,
    },
    timeoutMs: (options.timeoutMs ?? 30_000) + 1_000,
    async execute(args, ctx) {
      const maxChars = typeof args.max_chars === 'number' ? args.max_chars : defaultMax;
      try {
        const res = await guardedFetch(
          String(args.url),
          { headers: { accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.1', 'user-agent': 'DataAgent/0.1 (fetch_url)' }, signal: ctx.signal },
          options,
        );
        const type = res.headers['content-type'] ?? '';
        let page: { title?: string; markdown: string };
        if (/html/i.test(type) || (type === '' && /^\s*<(!doctype|html)/i.test(res.text()))) page = htmlToMarkdown(res.text());
        else if (type === '' || /^text\/|json|xml/i.test(type)) page = { markdown: res.text() };
        else return { success: false, output: { url: res.url, status_code: res.status, content_type: type }, error: `Cannot show content of type ${type}` };
        const truncated = page.markdown.length > maxChars;
        const output = {
          url: res.url,
          status_code: res.status,
          ...(page.title ? { title: page.title } : {}),
          content: truncated ? `${page.markdown.slice(0, maxChars)}\n… (cut at ${maxChars} of ${page.markdown.length} characters)` : page.markdown,
          ...(truncated ? { truncated: true } : {}),
        };
        return res.status < 400 ? { success: true, output } : { success: false, output, error: `HTTP ${res.status}` };
      } catch (err) {
        return outboundFailure(err);
      }
    },
  };
}
