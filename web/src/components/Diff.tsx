import { structuredPatch } from 'diff';
import { useMemo, useState } from 'preact/hooks';
import type { FileEdit, PatchHunk } from '../types';
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

/**
 * Claude's own patch of a change, numbered with the file's real lines as Claude shows them
 * ("Lines 4-7"), old and new numbers in the gutter.
 */
export function PatchView(props: { path: string; patch: PatchHunk[]; cut?: boolean }) {
  const [all, setAll] = useState(false);
  const rows = useMemo(() => {
    const out: { cls: string; text: string; o: string; n: string }[] = [];
    for (const h of props.patch) {
      const last = h.new_start + Math.max(h.new_lines, 1) - 1;
      out.push({ cls: 'hunk', text: h.new_lines <= 1 ? `Line ${h.new_start}` : `Lines ${h.new_start}-${last}`, o: '', n: '' });
      let o = h.old_start;
      let n = h.new_start;
      for (const l of h.lines ?? []) {
        if (l.startsWith('\\')) continue;
        const c = l[0] === '+' ? 'add' : l[0] === '-' ? 'del' : 'ctx';
        out.push({ cls: c, text: l, o: c === 'add' ? '' : String(o), n: c === 'del' ? '' : String(n) });
        if (c !== 'add') o++;
        if (c !== 'del') n++;
      }
    }
    return out;
  }, [props.patch]);
  const shown = all ? rows : rows.slice(0, MAX_LINES);
  const add = rows.filter((l) => l.cls === 'add').length;
  const del = rows.filter((l) => l.cls === 'del').length;
  return (
    <div class="diff" data-testid="patch">
      <div class="diff-head">
        <span class="diff-path" title={props.path}>
          {shortDir(props.path)}
        </span>
        <span class="diff-stat">
          <span class="add">+{add}</span> <span class="del">−{del}</span>
        </span>
      </div>
      <pre class="diff-body diff-numbered" aria-label={`Diff of ${props.path}`}>
        {shown.map((l, i) => (
          <div key={i} class={`dl dl-${l.cls}`}>
            {l.cls !== 'hunk' && (
              <>
                <span class="ln" aria-hidden="true">
                  {l.o}
                </span>
                <span class="ln" data-testid="patch-line-number">
                  {l.n}
                </span>
              </>
            )}
            <span class="dl-text">{l.text || ' '}</span>
          </div>
        ))}
      </pre>
      {!all && rows.length > MAX_LINES && (
        <button type="button" class="btn btn-small" onClick={() => setAll(true)}>
          Show all {rows.length} lines
        </button>
      )}
      {props.cut && <div class="muted small">The patch is cut here; the whole change is in the file.</div>}
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
