// The syntax highlighter, a bundle of its own (hl.js) that the page loads only when a code
// block names a language (highlight.ts): highlight.js core with the languages Claude writes
// most. It sets window.__corralHL.

import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import makefile from 'highlight.js/lib/languages/makefile';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const langs = { bash, css, diff, dockerfile, go, javascript, json, makefile, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(langs)) hljs.registerLanguage(name, lang);
hljs.configure({ ignoreUnescapedHTML: true });

(window as unknown as { __corralHL: typeof hljs }).__corralHL = hljs;
