// Syntax highlighting of the timeline's code blocks, loaded on first use (hl.js, built by
// build.mjs from hl.ts) so that the page itself stays light.

interface HL {
  getLanguage(name: string): unknown;
  highlightElement(el: HTMLElement): void;
}

let loading: Promise<HL | null> | null = null;

function load(): Promise<HL | null> {
  if (!loading) {
    loading = new Promise((resolve) => {
      const s = document.createElement('script');
      s.src = '/hl.js';
      s.async = true;
      s.onload = () => resolve((window as unknown as { __corralHL?: HL }).__corralHL ?? null);
      s.onerror = () => {
        loading = null; // try again next time
        resolve(null);
      };
      document.head.appendChild(s);
    });
  }
  return loading;
}

/** Highlight the code blocks under root that name a language and are not highlighted yet. */
export function highlightUnder(root: HTMLElement | null): void {
  if (!root) return;
  const blocks = [...root.querySelectorAll<HTMLElement>('pre > code[class*="language-"]:not([data-hl])')];
  if (blocks.length === 0) return;
  for (const b of blocks) b.setAttribute('data-hl', 'pending');
  void load().then((hl) => {
    for (const b of blocks) {
      const lang = /language-([\w+-]+)/.exec(b.className)?.[1];
      // Text only: the block's HTML came from the sanitized markdown, and hljs rebuilds it from its text.
      if (hl && lang && hl.getLanguage(lang) && b.isConnected && b.textContent!.length <= 100_000) {
        try {
          hl.highlightElement(b);
          b.setAttribute('data-hl', 'done');
          continue;
        } catch {
          /* leave it plain */
        }
      }
      b.setAttribute('data-hl', 'none');
    }
  });
}
