import { Marked } from 'marked';
import { markedTerminal } from 'marked-terminal';

const renderers = new Map<number, Marked>();

/**
 * Markdown as styled terminal text (marked-terminal, code blocks highlighted by cli-highlight),
 * wrapped to `width` columns. Called again as an answer grows, so half-written markdown must
 * render too: an unclosed code fence shows as the code so far.
 */
export function renderMarkdown(markdown: string, width: number): string {
  let marked = renderers.get(width);
  if (!marked) {
    marked = new Marked(markedTerminal({ width, reflowText: true, tab: 2 }), {
      // marked-terminal 7 prints a tight list item's text raw (`**x**` stays): parse its inline
      // tokens here; `false` leaves every other text to marked-terminal.
      renderer: {
        text(token) {
          return 'tokens' in token && token.tokens ? this.parser.parseInline(token.tokens) : false;
        },
      },
    });
    renderers.set(width, marked);
  }
  return (marked.parse(markdown, { async: false }) as string).replace(/\n+$/, '');
}
