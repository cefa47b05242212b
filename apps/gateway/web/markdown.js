/**
 * Model output as HTML. The text is untrusted (a model repeats what tools and web pages feed
 * it), so marked's HTML always passes DOMPurify before it reaches the page; the page's
 * Content-Security-Policy is the second wall.
 */
import { marked } from './vendor/marked.js';
import DOMPurify from './vendor/purify.js';

const purifier = DOMPurify(window);

// Links open in a new tab and tell the target nothing about the chat.
purifier.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});
// An image from anywhere but a data: URL would be a request the page never meant to make
// (and one the CSP refuses): it keeps its alt text and loses its source.
purifier.addHook('uponSanitizeAttribute', (node, data) => {
  if (node.tagName === 'IMG' && data.attrName === 'src' && !/^data:image\/(?:png|gif|jpeg|webp);/i.test(data.attrValue)) data.keepAttr = false;
});

const SANITIZE = {
  USE_PROFILES: { html: true },
  // Forms, media and inline styles have no place in an answer (media would load, styles break the CSP).
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'option', 'audio', 'video', 'picture', 'source', 'track'],
  FORBID_ATTR: ['style', 'srcset'],
};

/** Markdown to sanitised HTML, ready for innerHTML. */
export function renderMarkdown(text) {
  return purifier.sanitize(marked.parse(text, { async: false, gfm: true }), SANITIZE);
}
