/**
 * Model output as HTML. The text is untrusted (a model repeats what tools and web pages feed
 * it), so three walls stand between it and the page:
 * 1. The markdown renderer never emits the model's own markup: raw HTML in the text is escaped
 *    and shown as text, and an image is emitted only for a data: URL. No HTML parser ever sees
 *    a tag the model wrote (a parse document is not inert in every browser: some fetch its
 *    images and try their handlers).
 * 2. DOMPurify sanitises what markdown itself produced (links, emphasis, tables, code).
 * 3. The page's Content-Security-Policy refuses inline scripts and foreign images.
 */
import { Marked } from './vendor/marked.js';
import DOMPurify from './vendor/purify.js';

/** The images an answer may show: inline data of a raster type (the CSP's img-src allows data:). */
const DATA_IMAGE = /^data:image\/(?:png|gif|jpeg|webp);/i;

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `text` with every character that HTML reads as markup replaced by its entity. */
export function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const markdown = new Marked({
  async: false,
  gfm: true,
  renderer: {
    // Raw HTML, block or inline, is text the model wrote: show it as such.
    html({ text, block }) {
      const escaped = escapeHtml(text);
      return block ? `<p>${escaped}</p>\n` : escaped;
    },
    // Any image but inline data would be a request the page never meant to make: keep the alt text.
    image({ href, text }) {
      return DATA_IMAGE.test(href ?? '') ? false : escapeHtml(text);
    },
  },
});

const purifier = DOMPurify(window);

// Links open in a new tab and tell the target nothing about the chat.
purifier.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});
// The renderer already drops such images; this holds if it ever stops doing so.
purifier.addHook('uponSanitizeAttribute', (node, data) => {
  if (node.tagName === 'IMG' && data.attrName === 'src' && !DATA_IMAGE.test(data.attrValue)) data.keepAttr = false;
});

const SANITIZE = {
  USE_PROFILES: { html: true },
  // Forms, media and inline styles have no place in an answer (media would load, styles break the CSP).
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'option', 'audio', 'video', 'picture', 'source', 'track'],
  FORBID_ATTR: ['style', 'srcset'],
};

/** Markdown to sanitised HTML, ready for innerHTML; raw HTML in `text` comes out as text. */
export function renderMarkdown(text) {
  return purifier.sanitize(markdown.parse(text), SANITIZE);
}
