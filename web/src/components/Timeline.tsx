import { Component } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, errorText } from '../api';
import { renderMarkdown } from '../markdown';
import { dialogSummary, draftFromMessage, feedbackLabel, feedbackOption, hasDialog } from '../dialog';
import { narrow, now, openGitFile, seenMark, setSeenMark, toast, toastError } from '../store';
import type { SeenMark } from '../store';
import { AttachButton, attachFile, pastedImage } from './Attach';
import type { LiveOutput, Session, TimelineItem, ToolCall, TurnFile } from '../types';
import { clock, debounce, parseTime, pretty, timeOfDay, toolSummary } from '../util';
import { DiffView, PatchView } from './Diff';
import { copyText } from '../terminal';
import { TimelineSearch } from './TimelineSearch';
import { highlightUnder } from '../highlight';
import { Icon } from './Icon';

function signature(it: TimelineItem): string {
  const t = it.tool;
  const tk = it.tokens;
  const files = it.files?.reduce((n, f) => n + f.edits, 0) ?? 0;
  return `${it.kind}|${it.text?.length ?? 0}|${it.status ?? ''}|${files}|${tk ? `${tk.responses}/${tk.output}/${tk.cost_usd}` : ''}|${it.duration_ms ?? ''}|${t ? `${t.done}|${t.is_error}|${t.result?.length ?? 0}|${t.truncated}` : ''}`;
}

/** The readable view of a session's transcript, with the prompt box under it. */
/** The most items a view holds, as the server answers at most. */
const MAX_ITEMS = 1000;

export function Timeline(props: { s: Session; visible: boolean }) {
  const s = props.s;
  const [items, setItems] = useState<TimelineItem[] | null>(null);
  const [error, setError] = useState('');
  const [newBelow, setNewBelow] = useState(false);
  // What the screen shows of the running tool's output (whole in every answer; null: none).
  const [live, setLive] = useState<LiveOutput | null>(null);
  // Where this view stands in the session's timeline ('' = nothing yet: the next answer is whole).
  const cursor = useRef('');
  const itemsRef = useRef<TimelineItem[] | null>(null);
  const prev = useRef(new Map<string, { sig: string; item: TimelineItem }>());
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const abort = useRef<AbortController | null>(null);
  const offline = useRef(!!s.offline);
  offline.current = !!s.offline;
  const [away, setAway] = useState(false);
  // "New since you last looked" (state/seen.ts): the id of the first item newer than the last one
  // seen on the previous visit ('' = none), placed once per visit when its first answer comes.
  const [divider, setDivider] = useState('');
  const toDivider = useRef(false);
  // The mark read when this visit began, until an answer asked for after that places the divider
  // (undefined = placed; null = this browser never saw the session).
  const visitMark = useRef<SeenMark | null | undefined>(undefined);
  const visitGen = useRef(0);
  // The last item the person has had on screen during this visit.
  const seen = useRef<{ id: string; time: number } | null>(null);
  const [pageShown, setPageShown] = useState(document.visibilityState === 'visible');
  const looking = props.visible && pageShown;
  const lookingRef = useRef(looking);
  lookingRef.current = looking;

  const load = useMemo(
    () => async () => {
      abort.current?.abort();
      const ac = new AbortController();
      abort.current = ac;
      const gen = visitGen.current;
      try {
        // Only what changed since the last answer (docs/web-protocol.md): a changed item replaces
        // the one of its id, a new one is appended; a reset answer replaces everything.
        const tl = await api.timeline(s.id, cursor.current, ac.signal);
        if (ac.signal.aborted) return;
        setError('');
        setAway(false);
        setLive(tl.live ?? null);
        const delta = tl.items ?? [];
        if (!tl.reset && delta.length === 0) {
          cursor.current = tl.cursor;
          if (gen === visitGen.current) placeDivider(itemsRef.current ?? []);
          return;
        }
        // Unchanged items keep their objects, so their rows do not re-render.
        const held = tl.reset ? [] : [...(itemsRef.current ?? [])];
        const index = new Map(held.map((it, i) => [it.id, i]));
        const next = tl.reset ? new Map<string, { sig: string; item: TimelineItem }>() : prev.current;
        for (const it of delta) {
          const sig = signature(it);
          const old = prev.current.get(it.id);
          const item = old && old.sig === sig ? old.item : it;
          next.set(it.id, { sig, item });
          const i = index.get(it.id);
          if (i === undefined) {
            index.set(it.id, held.length);
            held.push(item);
          } else held[i] = item;
        }
        const list = held.length > MAX_ITEMS ? held.slice(held.length - MAX_ITEMS) : held;
        if (list !== held) for (const it of held.slice(0, held.length - MAX_ITEMS)) next.delete(it.id);
        prev.current = next;
        cursor.current = tl.cursor;
        itemsRef.current = list;
        setItems(list);
        if (gen === visitGen.current) placeDivider(list);
      } catch (e) {
        if ((e as Error).name === 'AbortError') return;
        // The machine is away: keep what we have; it loads again when the machine is back.
        if (offline.current || (e instanceof ApiError && e.status === 503)) {
          setAway(true);
          setError('');
          return;
        }
        if (e instanceof ApiError && e.status === 404) setError('No timeline for this session.');
        else setError(errorText(e));
      }
    },
    [s.id],
  );
  const refetch = useMemo(() => debounce(() => void load(), 300), [load]);

  // The first item after the mark: by id, or by time once the marked item is out of the view.
  const placeDivider = (list: TimelineItem[]) => {
    const mark = visitMark.current;
    if (mark === undefined) return;
    visitMark.current = undefined;
    if (!mark || list.length === 0) return;
    let at = list.findIndex((it) => it.id === mark.id);
    if (at >= 0) at++;
    else if (mark.time > 0) at = list.findIndex((it) => parseTime(it.time) > mark.time);
    const first = at >= 0 ? list[at] : undefined;
    if (!first) return;
    toDivider.current = true;
    setDivider(first.id);
  };

  // Which item the person has seen: the last whose row starts above the view's bottom edge (cheap
  // at the bottom, where it is the last one).
  const noteSeen = () => {
    const el = scroller.current;
    const list = itemsRef.current;
    if (!el || !list || list.length === 0 || el.clientHeight === 0) return;
    let id = list[list.length - 1]?.id;
    if (!stick.current) {
      const bottom = el.getBoundingClientRect().bottom;
      const rows = el.querySelectorAll<HTMLElement>('.tl-row[data-item-id]');
      id = undefined;
      for (let i = rows.length - 1; i >= 0; i--) {
        const r = rows[i];
        if (r && r.getBoundingClientRect().top < bottom) {
          id = r.dataset.itemId;
          break;
        }
      }
    }
    const it = id === undefined ? undefined : list.find((x) => x.id === id);
    if (it) seen.current = { id: it.id, time: parseTime(it.time) };
  };
  const noteSeenSoon = useMemo(() => debounce(noteSeen, 200), []);

  // Record how far the person read: only forward (reading old turns again does not move it back).
  const saveSeen = () => {
    noteSeenSoon.cancel();
    if (scroller.current && scroller.current.clientHeight > 0) noteSeen();
    const m = seen.current;
    const list = itemsRef.current;
    if (!m || !list) return;
    const old = seenMark(s.id);
    if (old && old.id !== m.id) {
      const oi = list.findIndex((it) => it.id === old.id);
      const ni = list.findIndex((it) => it.id === m.id);
      if (oi > ni) return;
    }
    setSeenMark(s.id, m.id, m.time);
  };

  useEffect(() => {
    const vis = () => {
      const shown = document.visibilityState === 'visible';
      // Now, while the page can still be measured (and before an unload, which renders nothing more).
      if (!shown && lookingRef.current) saveSeen();
      setPageShown(shown);
    };
    document.addEventListener('visibilitychange', vis);
    return () => document.removeEventListener('visibilitychange', vis);
  }, []);

  // A visit: from the view being shown until the session is left, the tab switched or the page
  // hidden. It starts with the mark of the last one, and ends by recording its own.
  useEffect(() => {
    if (!looking) return;
    visitGen.current++;
    visitMark.current = seenMark(s.id);
    seen.current = null;
    setDivider('');
    if (itemsRef.current !== null) refetch();
    return () => {
      saveSeen();
      visitMark.current = undefined;
    };
  }, [looking]);

  // New session: start over.
  useEffect(() => {
    cursor.current = '';
    itemsRef.current = null;
    prev.current = new Map();
    stick.current = true;
    setItems(null);
    setError('');
    void load();
    return () => {
      refetch.cancel();
      abort.current?.abort();
    };
  }, [s.id]);

  // Every session event for this session (a new object in the store) may mean new items.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    refetch();
  }, [s]);

  // While a tool runs no event comes until it ends: ask again every second for its live output.
  const toolRuns = s.status === 'busy' && !!s.current_tool && !s.offline;
  useEffect(() => {
    if (!toolRuns || !looking) return;
    const t = setInterval(() => void load(), 1000);
    return () => clearInterval(t);
  }, [toolRuns, looking, load]);

  // Back on the tab: catch up.
  useEffect(() => {
    if (props.visible && items !== null) refetch();
  }, [props.visible]);

  useEffect(() => {
    if (props.visible) highlightUnder(scroller.current);
  }, [items, props.visible]);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el || !props.visible) return;
    const d = toDivider.current ? el.querySelector('[data-testid="tl-new-divider"]') : null;
    if (d) {
      toDivider.current = false;
      el.scrollTop += d.getBoundingClientRect().top - el.getBoundingClientRect().top - 8;
      stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
      setNewBelow(!stick.current);
    } else if (stick.current) {
      el.scrollTop = el.scrollHeight;
      setNewBelow(false);
    } else {
      setNewBelow(true);
    }
    if (looking) noteSeen();
  }, [items, props.visible, divider]);

  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
    stick.current = atBottom;
    if (atBottom) {
      setNewBelow(false);
      noteSeen();
    } else noteSeenSoon();
  };

  const toBottom = () => {
    const el = scroller.current;
    if (!el) return;
    stick.current = true;
    el.scrollTop = el.scrollHeight;
    setNewBelow(false);
  };

  // How long each turn took: from its prompt to the last item before the next prompt.
  const took = useMemo(() => turnTimes(items, s.status === 'busy'), [items, s.status]);

  // Copy buttons on code blocks (markdown.ts adds them to the sanitized HTML).
  const onClick = (e: MouseEvent) => {
    const b = (e.target as HTMLElement).closest?.('.code-copy') as HTMLButtonElement | null;
    if (!b) return;
    const code = b.parentElement?.querySelector('pre')?.textContent ?? '';
    void copyText(code).then((ok) => {
      b.textContent = ok ? 'Copied' : 'Copy failed';
      setTimeout(() => (b.textContent = 'Copy'), 1500);
    });
  };

  return (
    <div class="timeline-wrap" hidden={!props.visible}>
      {items && items.length > 0 && <TimelineSearch items={items} scroller={scroller} />}
      {/* biome-ignore lint/a11y/noStaticElementInteractions: one delegated handler for the copy buttons inside, which are real buttons */}
      <div class="timeline" ref={scroller} onScroll={onScroll} onClick={onClick} data-testid="timeline" aria-live="off">
        {away && (
          <div class="tl-empty tl-away" role="status">
            {items === null
              ? 'The machine is offline: the timeline loads when it is back.'
              : 'The machine is offline: this is the timeline as last loaded.'}
          </div>
        )}
        {items === null && !error && !away && <div class="tl-empty">Loading the timeline…</div>}
        {error && (
          <div class="tl-empty tl-error" role="alert">
            {error}{' '}
            <button type="button" class="btn btn-small" onClick={() => void load()}>
              Retry
            </button>
          </div>
        )}
        {items !== null && items.length === 0 && !error && (
          <div class="tl-empty">
            {s.kind === 'shell'
              ? 'A plain shell has no conversation to show. What you type below goes to the shell.'
              : 'Nothing here yet. Type a prompt below.'}
          </div>
        )}
        {items?.map((it) => [
          it.id === divider && (
            <div key="new-divider" class="tl-item tl-divider tl-new" role="separator" data-testid="tl-new-divider">
              <span>New since you last looked</span>
            </div>
          ),
          <div key={it.id} class="tl-row" data-item-id={it.id}>
            <Item item={it} took={took.get(it.id)} sid={s.id} dir={s.dir} git={!!s.git && !s.offline} />
          </div>,
        ])}
        <LiveTail s={s} items={items} live={live} />
      </div>
      {newBelow && (
        <button type="button" class="btn btn-small jump" onClick={toBottom}>
          ↓ New below
        </button>
      )}
      <PromptBox s={s} />
    </div>
  );
}

/** What the running tool does, from its call in the timeline (the last one of that name not done). */
function runningSummary(items: TimelineItem[] | null, name: string): string {
  if (!items) return '';
  for (let i = items.length - 1; i >= 0; i--) {
    const t = items[i]?.tool;
    if (t && !t.done && t.name === name) return toolSummary(t.name, t.input);
  }
  return '';
}

/** The running tool's output as the screen shows it: plain text (never HTML), its last lines. */
function LiveLines(props: { live: LiveOutput }) {
  const l = props.live;
  const lines = l.lines ?? [];
  if (lines.length === 0 && !l.hidden) return null;
  return (
    <pre class="tl-live-out" data-testid="live-output" aria-label={`Output of ${l.tool} so far`}>
      {l.hidden ? <span class="muted">{`… ${l.hidden} earlier line${l.hidden === 1 ? '' : 's'}\n`}</span> : null}
      {lines.join('\n')}
    </pre>
  );
}

function LiveTail(props: { s: Session; items: TimelineItem[] | null; live: LiveOutput | null }) {
  const s = props.s;
  if (s.status === 'busy') {
    const since = parseTime(s.busy_since);
    const what = s.current_tool ? runningSummary(props.items, s.current_tool) : '';
    // Only the output of the tool running now: dropped once its result came (current_tool moves on).
    const live = props.live && s.current_tool && props.live.tool === s.current_tool && !s.compacting ? props.live : null;
    return (
      <>
        <div class="tl-live" role="status" data-testid="live-tail">
          <span class="spinner" aria-hidden="true" />
          {s.compacting ? (
            'Compacting'
          ) : s.current_tool ? (
            <>
              Running {s.current_tool}
              {what && (
                <>
                  : <code class="tl-live-cmd">{what}</code>
                </>
              )}
            </>
          ) : (
            'Working'
          )}
          {since > 0 && <span class="muted"> · {clock((now.value - since) / 1000)}</span>}
        </div>
        {live && <LiveLines live={live} />}
      </>
    );
  }
  if (s.status === 'needs-input') {
    return (
      <div class="tl-live tl-live-needs" role="status">
        Waiting for you: {dialogSummary(s.waiting_for)} (the card above)
      </div>
    );
  }
  return null;
}

/** A token count, short: 950, 12.3k, 1.2M. */
function tokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A turn's cost, to the cent: $0.42, or <$0.01. */
function turnCost(usd: number): string {
  return usd > 0 && usd < 0.005 ? '<$0.01' : `$${usd.toFixed(2)}`;
}

/** Each finished turn's length in seconds, by its prompt's id (the running one is left out). */
function turnTimes(items: TimelineItem[] | null, busy: boolean): Map<string, number> {
  const out = new Map<string, number>();
  if (!items) return out;
  let prompt: TimelineItem | null = null;
  let last = 0;
  const close = () => {
    if (!prompt) return;
    // Claude's own measure when it wrote one, else first to last item.
    if (prompt.duration_ms) {
      out.set(prompt.id, prompt.duration_ms / 1000);
      return;
    }
    const start = parseTime(prompt.time);
    if (start > 0 && last >= start) out.set(prompt.id, (last - start) / 1000);
  };
  for (const it of items) {
    if (it.kind === 'prompt') {
      close();
      prompt = it;
      last = 0;
      continue;
    }
    const t = parseTime(it.time);
    if (t > last) last = t;
  }
  if (!busy || prompt?.duration_ms) close();
  return out;
}

interface ItemProps {
  item: TimelineItem;
  took?: number;
  /** The session, its folder, and whether its Git panel can show a file's diff. */
  sid: string;
  dir: string;
  git: boolean;
}

class Item extends Component<ItemProps> {
  shouldComponentUpdate(next: ItemProps) {
    const p = this.props;
    return next.item !== p.item || next.took !== p.took || next.git !== p.git || next.dir !== p.dir;
  }
  render() {
    const it = this.props.item;
    const time = timeOfDay(it.time);
    const took = this.props.took;
    switch (it.kind) {
      case 'prompt':
        return (
          <div class="tl-item tl-prompt" data-kind="prompt">
            <div class="bubble">{it.text}</div>
            {(time || took !== undefined || it.tokens) && (
              <div class="tl-time">
                {time}
                {took !== undefined && (
                  <span data-testid="turn-time" title="How long the turn took">
                    {time ? ' · ' : ''}took {clock(took)}
                  </span>
                )}
                {it.tokens && (
                  <span
                    data-testid="turn-tokens"
                    title={`Tokens of this turn's ${it.tokens.responses} API response${it.tokens.responses === 1 ? '' : 's'} (its subagents' included): ${it.tokens.input} input, ${it.tokens.cache_read} read from the cache, ${it.tokens.cache_creation} written to it, ${it.tokens.output} output`}
                  >
                    {' · '}
                    {tokens(it.tokens.input + it.tokens.cache_read + it.tokens.cache_creation)} in, {tokens(it.tokens.output)} out
                  </span>
                )}
                {it.tokens && !it.tokens.unpriced && (
                  <span
                    data-testid="turn-cost"
                    title={`What this turn's API responses cost at Anthropic's list prices: $${it.tokens.cost_usd.toFixed(4)} (the agent's count from their usage, the subagents it launched included)`}
                  >
                    {' · '}
                    {turnCost(it.tokens.cost_usd)}
                  </span>
                )}
              </div>
            )}
            {it.files && it.files.length > 0 && (
              <TurnFiles files={it.files} sid={this.props.sid} dir={this.props.dir} git={this.props.git} />
            )}
          </div>
        );
      case 'text':
        return (
          <div class="tl-item tl-text" data-kind="text">
            <div class="md" dangerouslySetInnerHTML={{ __html: renderMarkdown(it.text ?? '') }} />
          </div>
        );
      case 'thinking':
        return (
          <details class="tl-item tl-thinking" data-kind="thinking">
            <summary>Thinking</summary>
            <div class="md muted" dangerouslySetInnerHTML={{ __html: renderMarkdown(it.text ?? '') }} />
          </details>
        );
      case 'tool':
        return it.tool ? <ToolItem t={it.tool} /> : null;
      case 'interrupt':
        return (
          <div class="tl-item tl-divider tl-interrupt" data-kind="interrupt" role="note">
            <span>{interruptText(it.text)}</span>
          </div>
        );
      case 'compaction':
        return (
          <div class="tl-item tl-divider tl-compact" data-kind="compaction" role="note">
            <span>Conversation compacted{it.text ? ` (${it.text})` : ''}</span>
          </div>
        );
      case 'api_error':
        return (
          <div class="tl-item tl-api-error" data-kind="api_error" role="note">
            <strong>API error{it.status ? ` ${it.status}` : ''}</strong>
            {it.text && <div class="pre-wrap">{it.text}</div>}
          </div>
        );
      case 'command':
        return (
          <div class="tl-item tl-command" data-kind="command">
            <code>{it.text}</code>
          </div>
        );
    }
    return it.text ? (
      <div class="tl-item tl-text" data-kind={it.kind}>
        <div class="pre-wrap">{it.text}</div>
      </div>
    ) : null;
  }
}

/** The most files a turn lists; the rest are counted. */
const MAX_TURN_FILES = 50;

/** A path under the session's folder, relative to it; another as it is. */
function underDir(path: string, dir: string): string {
  const d = dir.replace(/\/+$/, '');
  return d && path.startsWith(`${d}/`) ? path.slice(d.length + 1) : path;
}

/** The files a turn changed, each opening its diff in the Git panel when the folder is a repository. */
function TurnFiles(props: { files: TurnFile[]; sid: string; dir: string; git: boolean }) {
  const shown = props.files.slice(0, MAX_TURN_FILES);
  const more = props.files.length - shown.length;
  return (
    <ul class="tl-files" data-testid="turn-files" aria-label="Files this turn changed">
      {shown.map((f) => {
        const body = (
          <>
            <span class="tl-file-path">{underDir(f.path, props.dir)}</span>
            {f.created && <span class="tag">new</span>}
            <span class="diff-stat">
              <span class="add">+{f.added}</span>
              <span class="del">−{f.removed}</span>
            </span>
          </>
        );
        return (
          <li key={f.path} data-testid="turn-file" data-path={f.path}>
            {props.git ? (
              <button
                type="button"
                class="tl-file"
                data-testid="turn-file-open"
                title={`${f.path}: show its diff in the Git panel`}
                onClick={() => openGitFile(props.sid, f.path)}
              >
                {body}
              </button>
            ) : (
              <span class="tl-file" title={f.path}>
                {body}
              </span>
            )}
          </li>
        );
      })}
      {more > 0 && <li class="muted">and {more} more</li>}
    </ul>
  );
}

function ToolItem(props: { t: ToolCall }) {
  const t = props.t;
  const [open, setOpen] = useState(false);
  const summary = toolSummary(t.name, t.input);
  const edits = t.edits ?? [];
  const state = !t.done ? 'running' : t.is_error ? 'error' : 'ok';
  const firstErr = t.is_error && t.result ? (t.result.split('\n').find((l) => l.trim()) ?? '') : '';
  const id = `tool-${t.id}`;
  return (
    <div class={`tl-item tl-tool tool-${state}`} data-kind="tool" data-tool={t.name}>
      <button type="button" class="tool-head" aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)}>
        <span class={`tool-state ts-${state}`} aria-label={state === 'running' ? 'running' : state === 'error' ? 'failed' : 'done'}>
          {state === 'running' ? <span class="spinner" /> : state === 'error' ? '✗' : '✓'}
        </span>
        <span class="tool-name">{t.name}</span>
        <span class="tool-sum">{summary}</span>
      </button>
      {firstErr && !open && <div class="tool-err-line">{firstErr}</div>}
      {t.patch && t.patch.length > 0 ? (
        <div class="tool-edits">
          <PatchView path={edits[0]?.path ?? ''} patch={t.patch} cut={t.patch_cut} />
        </div>
      ) : (
        edits.length > 0 && (
          <div class="tool-edits">
            {edits.map((e, i) => (
              <DiffView key={i} edit={e} />
            ))}
          </div>
        )
      )}
      {open && (
        <div class="tool-body" id={id}>
          <div class="tool-sec">Input</div>
          <pre class="code-block">
            <code>{t.name === 'Bash' && isCmd(t.input) ? (t.input as { command: string }).command : pretty(t.input ?? {})}</code>
          </pre>
          {t.done && (
            <>
              <div class="tool-sec">{t.is_error ? 'Error' : 'Result'}</div>
              <LongOutput text={t.result || '(empty)'} error={!!t.is_error} />
              {t.truncated && <div class="muted small">Result cut at 64 KiB; the full text is in the transcript.</div>}
            </>
          )}
          {!t.done && <div class="muted small">Still running…</div>}
        </div>
      )}
    </div>
  );
}

/** Output longer than this many lines shows its start and end, with "Show all". */
const COLLAPSE_LINES = 40;

function LongOutput(props: { text: string; error: boolean }) {
  const [all, setAll] = useState(false);
  const lines = props.text.split('\n');
  const long = lines.length > COLLAPSE_LINES;
  const shown = !long || all ? props.text : [...lines.slice(0, 20), `… ${lines.length - 30} more lines …`, ...lines.slice(-10)].join('\n');
  return (
    <>
      <pre
        class={`code-block${props.error ? ' is-error' : ''}`}
        data-testid="tool-output"
        data-collapsed={long && !all ? 'true' : undefined}
      >
        <code>{shown}</code>
      </pre>
      {long && (
        <button type="button" class="btn btn-small" data-testid="tool-output-toggle" onClick={() => setAll(!all)}>
          {all ? 'Show less' : `Show all ${lines.length} lines`}
        </button>
      )}
    </>
  );
}

function interruptText(t: string | undefined): string {
  if (!t) return 'Interrupted by user';
  const m = /^\[Request interrupted by user([^\]]*)\]/.exec(t.trim());
  return m ? `Interrupted by user${m[1] ?? ''}` : t;
}

function isCmd(v: unknown): boolean {
  return typeof v === 'object' && v !== null && typeof (v as { command?: unknown }).command === 'string';
}

/** A send the agent refused: what it said, and for a draft, the draft. */
interface Refusal {
  code: string;
  message: string;
  /** The text that was to be sent (draft_present: resent with clear_draft). */
  text: string;
  draft: string;
}

// Enter right after the box turned into a dialog's answer was meant for the
// prompt being typed: it is not an answer.
const MODE_GUARD_MS = 800;

/**
 * The prompt box. While a dialog is open it types nothing into the session:
 * during a permission prompt that offers "No, and tell Claude what to do
 * differently" it is that answer (labelled so); otherwise it is disabled and
 * says what to do.
 */
export function PromptBox(props: { s: Session }) {
  const s = props.s;
  const [text, setText] = useState('');
  const [feedback, setFeedback] = useState('');
  const [sending, setSending] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const ta = useRef<HTMLTextAreaElement>(null);
  // A file saved in the session's folder: named in the prompt (Claude reads @path).
  const attached = (p: string) => {
    const ref = s.kind === 'shell' ? p : `@${p}`;
    setText((cur) => `${cur && !/\s$/.test(cur) ? cur + ' ' : cur}${ref} `);
    ta.current?.focus();
  };
  const attachError = (m: string) => toast(`Attach failed: ${m}`);
  const exited = s.status === 'exited';
  const off = !!s.offline;
  const dialog = hasDialog(s);
  const w = s.waiting_for;
  const fb = dialog ? feedbackOption(w) : undefined;
  const dialogId = w?.dialog_id ?? '';
  const answering = !!fb && !off;
  const blocked = exited || off || (dialog && (!fb || !dialogId));
  const reason = off
    ? `${s.device ? s.device : 'The machine'} is offline: prompts can be sent once it reconnects.`
    : exited
      ? s.kind === 'claude'
        ? 'Claude has exited in this session: press Restart or Resume above, or use the terminal.'
        : 'Claude has exited in this session: nothing reads prompts now (use the terminal).'
      : dialog && fb && !dialogId
        ? 'Reading the dialog…'
        : dialog && !fb
          ? 'A dialog is open, so nothing is typed into the session. Answer the dialog above, or press Esc.'
          : '';
  const modeAt = useRef(0);
  const mode = answering ? 'feedback' : 'prompt';
  useEffect(() => {
    modeAt.current = Date.now();
  }, [mode]);

  // Keep a draft per session.
  useEffect(() => {
    setText(sessionStorage.getItem(`draft:${s.id}`) ?? '');
    setRefusal(null);
  }, [s.id]);
  useEffect(() => {
    if (text) sessionStorage.setItem(`draft:${s.id}`, text);
    else sessionStorage.removeItem(`draft:${s.id}`);
  }, [text]);
  const value = answering ? feedback : text;
  useEffect(() => {
    const el = ta.current;
    if (el) {
      el.style.height = 'auto';
      el.style.height = Math.min(el.scrollHeight, 200) + 'px';
    }
  }, [value]);
  // A refusal is about the prompt: it goes once a dialog takes the box.
  useEffect(() => {
    if (dialog) setRefusal(null);
  }, [dialog]);

  const sendPrompt = (t: string, clearDraft: boolean) => {
    setSending(true);
    setRefusal(null);
    api
      .input(s.id, t, true, clearDraft)
      // Text typed meanwhile stays.
      .then(() => setText((cur) => (cur.trim() === t.trim() ? '' : cur)))
      .catch((e) => {
        const code = e instanceof ApiError ? e.code : 'network';
        const message = errorText(e);
        setRefusal({ code, message, text: t, draft: code === 'draft_present' ? draftFromMessage(message) : '' });
      })
      .finally(() => {
        setSending(false);
        ta.current?.focus();
      });
  };
  const sendFeedback = (t: string) => {
    if (!fb || !dialogId) return;
    setSending(true);
    api
      .answer(s.id, { dialog: dialogId, option: fb.number, text: t })
      .then(() => setFeedback(''))
      .catch((e) => setRefusal({ code: e instanceof ApiError ? e.code : 'network', message: errorText(e), text: '', draft: '' }))
      .finally(() => setSending(false));
  };
  const send = () => {
    if (sending || blocked) return;
    if (answering) {
      // An answer's text is one line.
      const t = feedback.replace(/\s*[\r\n]+\s*/g, ' ').trim();
      if (t) sendFeedback(t);
      return;
    }
    if (text.trim()) sendPrompt(text, false);
  };

  const label = answering ? `${fb!.number}. ${feedbackLabel(fb!)}` : '';
  return (
    <form
      class={`prompt-box${answering ? ' answering' : ''}`}
      data-testid="prompt-form"
      data-mode={blocked ? 'blocked' : mode}
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      {answering && (
        <label class="prompt-answer-label" for={`prompt-${s.id}`} data-testid="prompt-answer-label">
          Answer the dialog: {label}
        </label>
      )}
      {refusal && (
        <div class={`prompt-notice notice-${refusal.code}`} role="alert" data-testid="prompt-refusal" data-code={refusal.code}>
          {refusal.code === 'draft_present' ? (
            <>
              <span>
                Claude's input box already holds text typed in the terminal
                {refusal.draft ? (
                  <>
                    : <q class="draft-text">{refusal.draft}</q>
                  </>
                ) : (
                  ''
                )}
                . Nothing was sent.
              </span>
              <span class="notice-actions">
                <button
                  type="button"
                  class="btn btn-small btn-primary"
                  data-testid="replace-draft"
                  disabled={sending}
                  onClick={() => sendPrompt(refusal.text, true)}
                >
                  Replace the draft
                </button>
                <button type="button" class="btn btn-small" data-testid="keep-draft" onClick={() => setRefusal(null)}>
                  Keep it
                </button>
              </span>
            </>
          ) : (
            <>
              <span>{refusal.message}</span>
              <button type="button" class="icon-btn notice-close" aria-label="Dismiss" onClick={() => setRefusal(null)}>
                <Icon name="x" size={14} />
              </button>
            </>
          )}
        </div>
      )}
      <div class="prompt-row">
        {s.status === 'busy' && !off && (
          <button
            type="button"
            class="btn btn-ghost interrupt"
            title="Interrupt: press Escape in the session"
            aria-label="Interrupt (Esc)"
            onClick={() => api.keys(s.id, ['Escape']).catch(toastError('Interrupt failed'))}
          >
            Esc
          </button>
        )}
        {!answering && <AttachButton s={s} disabled={blocked} onAttached={attached} onError={attachError} />}
        <textarea
          ref={ta}
          id={`prompt-${s.id}`}
          data-testid="prompt-box"
          rows={1}
          value={value}
          disabled={blocked}
          maxLength={answering ? 4000 : undefined}
          aria-label={answering ? `Answer the dialog of ${s.name}: ${feedbackLabel(fb!)}` : `Prompt for ${s.name}`}
          aria-describedby={blocked ? 'prompt-reason' : undefined}
          placeholder={
            off
              ? 'Machine offline'
              : exited
                ? 'Session exited'
                : answering
                  ? 'Tell Claude what to do instead…'
                  : dialog
                    ? 'Answer the dialog above'
                    : s.kind === 'shell'
                      ? 'Type a command…'
                      : narrow.value
                        ? 'Message Claude…'
                        : 'Message Claude… (Enter sends, Shift+Enter for a new line)'
          }
          onInput={(e) => {
            const v = (e.target as HTMLTextAreaElement).value;
            if (answering) setFeedback(v);
            else setText(v);
          }}
          onPaste={(e) => {
            const img = answering || blocked ? null : pastedImage(e);
            if (!img) return;
            e.preventDefault();
            attachFile(s, img, true).then(attached, (err) => attachError(errorText(err)));
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.isComposing && e.keyCode !== 229 && (!e.shiftKey || answering)) {
              // (An answer is one line: Shift+Enter adds no line there.)
              e.preventDefault();
              if (e.shiftKey || (answering && Date.now() - modeAt.current < MODE_GUARD_MS)) return;
              send();
            }
          }}
        />
        <button
          type="submit"
          class="btn btn-primary send-btn"
          disabled={blocked || sending || !value.trim()}
          aria-label={answering ? `Send the answer: ${feedbackLabel(fb!)}` : 'Send'}
          data-testid="prompt-send"
        >
          {sending ? '…' : answering ? 'Tell Claude' : 'Send'}
        </button>
      </div>
      {blocked && (
        <div id="prompt-reason" class="prompt-reason" data-testid="prompt-reason">
          {reason}
        </div>
      )}
    </form>
  );
}
