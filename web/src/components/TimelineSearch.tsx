import type { RefObject } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import type { TimelineItem } from '../types';

/** Search within the conversation (Enter: the next match) and jump to any of its prompts. */
export function TimelineSearch(props: { items: TimelineItem[]; scroller: RefObject<HTMLDivElement> }) {
  const [q, setQ] = useState('');
  const [at, setAt] = useState(-1);
  const prompts = useMemo(() => props.items.filter((it) => it.kind === 'prompt'), [props.items]);
  const needle = q.trim().toLowerCase();
  const hits = useMemo(() => {
    if (!needle) return [] as string[];
    return props.items.filter((it) => searchText(it).includes(needle)).map((it) => it.id);
  }, [props.items, needle]);

  const show = (id: string) => {
    const root = props.scroller.current;
    const el = root?.querySelector<HTMLElement>(`[data-item-id="${CSS.escape(id)}"]`);
    if (!el) return;
    el.scrollIntoView({ block: 'center' });
    for (const x of root?.querySelectorAll('.tl-hit') ?? []) x.classList.remove('tl-hit');
    el.classList.add('tl-hit');
  };
  const next = (back: boolean) => {
    if (hits.length === 0) return;
    const i = at < 0 ? (back ? hits.length - 1 : 0) : (at + (back ? hits.length - 1 : 1)) % hits.length;
    setAt(i);
    show(hits[i]!);
  };
  return (
    <div class="tl-search" role="search">
      <input
        type="search"
        class="input"
        placeholder="Search this conversation"
        aria-label="Search this conversation"
        data-testid="timeline-search"
        value={q}
        onInput={(e) => {
          setQ((e.target as HTMLInputElement).value);
          setAt(-1);
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            next(e.shiftKey);
          } else if (e.key === 'Escape') {
            setQ('');
            setAt(-1);
          }
        }}
      />
      {needle && (
        <span class="muted small" data-testid="timeline-search-count" aria-live="polite">
          {hits.length === 0 ? 'no match' : at < 0 ? `${hits.length} found` : `${at + 1} of ${hits.length}`}
        </span>
      )}
      {prompts.length > 1 && (
        <select
          class="input tl-jump"
          aria-label="Jump to a prompt"
          data-testid="jump-to-prompt"
          value=""
          onChange={(e) => {
            const id = (e.target as HTMLSelectElement).value;
            if (id) show(id);
          }}
        >
          <option value="">Jump to a prompt…</option>
          {prompts.map((p, i) => (
            <option key={p.id} value={p.id}>
              {i + 1}. {oneLine(p.text ?? '', 60)}
            </option>
          ))}
        </select>
      )}
    </div>
  );
}

function searchText(it: TimelineItem): string {
  const t = it.tool;
  const parts = [it.text ?? ''];
  if (t) parts.push(t.name, t.input ? JSON.stringify(t.input) : '', t.result ?? '');
  return parts.join('\n').toLowerCase();
}

function oneLine(s: string, n: number): string {
  const l = s.replace(/\s+/g, ' ').trim();
  return l.length > n ? l.slice(0, n - 1) + '…' : l;
}
