import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const md = new Marked({ gfm: true, breaks: false, async: false });

// Task lists: marked draws their boxes as inputs. Only a checkbox stays, and it is never
// live (ticking it would change nothing; the transcript is what it is).
DOMPurify.addHook('uponSanitizeElement', (node, data) => {
  if (data.tagName === 'input' && (node as Element).getAttribute?.('type') !== 'checkbox') node.parentNode?.removeChild(node);
});

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
  if (node.tagName === 'INPUT') {
    node.setAttribute('disabled', '');
    node.setAttribute('tabindex', '-1');
    node.removeAttribute('name');
    node.removeAttribute('value');
  }
});

/** A copy button on every code block (trusted markup, added after sanitizing; the timeline handles its clicks). */
const COPY_BUTTON = '<button type="button" class="code-copy" aria-label="Copy the code" data-testid="code-copy">Copy</button>';

const cache = new Map<string, string>();

/** Markdown → sanitized HTML (memoized: timelines refetch often). */
export function renderMarkdown(text: string): string {
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  let html: string;
  try {
    html = md.parse(text) as string;
  } catch {
    html = escapeHTML(text);
  }
  const clean = DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['style', 'form', 'button', 'textarea', 'select'],
    FORBID_ATTR: ['style'],
  })
    .replace(/<pre>/g, `<div class="code-wrap">${COPY_BUTTON}<pre>`)
    .replace(/<\/pre>/g, '</pre></div>');
  if (cache.size > 2000) cache.clear();
  cache.set(text, clean);
  return clean;
}

export function escapeHTML(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
