import { structuredPatch } from 'diff';
import { useMemo, useState } from 'preact/hooks';
import type { FileEdit } from '../types';
import { isObject, shortDir, str } from '../util';

const MAX_LINES = 400;

/** A unified diff of one edit (for Write: the whole new file as additions). */
export function DiffView(props: { edit: FileEdit; showPath?: boolean }) {
  const e = props.edit;
  const [all, setAll] = useState(false);
  const lines = useMemo(() => {
    const out: { cls: string; text: string }[] = [];
    try {
      const p = structuredPatch(e.path, e.path, e.old ?? '', e.new ?? '', '', '', { context: 3 });
      for (const h of p.hunks) {
        out.push({ cls: 'hunk', text: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@` });
        for (const l of h.lines) {
          if (l.startsWith('\\')) continue; // "\ No newline at end of file"
          const c = l[0] === '+' ? 'add' : l[0] === '-' ? 'del' : 'ctx';
          out.push({ cls: c, text: l });
        }
      }
    } catch {
      out.push({ cls: 'ctx', text: '(no diff)' });
    }
    return out;
  }, [e.path, e.old, e.new]);
  const shown = all ? lines : lines.slice(0, MAX_LINES);
  const add = lines.filter((l) => l.cls === 'add').length;
  const del = lines.filter((l) => l.cls === 'del').length;
  return (
    <div class="diff">
      {props.showPath !== false && (
        <div class="diff-head">
          <span class="diff-path" title={e.path}>
            {shortDir(e.path)}
          </span>
          <span class="diff-stat">
            <span class="add">+{add}</span> <span class="del">−{del}</span>
            {e.replace_all && <span class="tag">replace all</span>}
            {!e.old && <span class="tag">new content</span>}
          </span>
        </div>
      )}
      <pre class="diff-body" aria-label={`Diff of ${e.path}`}>
        {shown.map((l, i) => (
          <div key={i} class={`dl dl-${l.cls}`}>
            {l.text || ' '}
          </div>
        ))}
      </pre>
      {!all && lines.length > MAX_LINES && (
        <button type="button" class="btn btn-small" onClick={() => setAll(true)}>
          Show all {lines.length} lines
        </button>
      )}
    </div>
  );
}

/** The edits of an Edit, MultiEdit or Write input (as the server's editsOf does). */
export function editsFromInput(tool: string, input: unknown): FileEdit[] {
  if (!isObject(input)) return [];
  const path = str(input['file_path']);
  if (!path) return [];
  switch (tool) {
    case 'Edit':
      return [{ path, old: str(input['old_string']), new: str(input['new_string']), replace_all: !!input['replace_all'] }];
    case 'MultiEdit': {
      const edits = input['edits'];
      if (!Array.isArray(edits)) return [];
      return edits.filter(isObject).map((x) => ({
        path,
        old: str(x['old_string']),
        new: str(x['new_string']),
        replace_all: !!x['replace_all'],
      }));
    }
    case 'Write':
      return [{ path, old: '', new: str(input['content']) }];
  }
  return [];
}
