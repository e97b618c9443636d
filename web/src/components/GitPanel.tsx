// The Git panel of a session: the status of its folder (branch, upstream,
// changed files) and the diff, unstaged or staged, drawn like the
// timeline's edits (docs/git.md: git_status, git_diff).

import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, errorText } from '../api';
import type { GitDiff, GitFile, GitFileDiff, GitStatus, Session } from '../types';
import { shortDir } from '../util';
import { Modal } from './Modal';

const MAX_PATCH_LINES = 800;

/** A path (absolute, as Claude named it) relative to the repository's root, as git's diff names it. */
function inRoot(path: string, root: string): string {
  const r = root.replace(/\/+$/, '');
  return r && path.startsWith(`${r}/`) ? path.slice(r.length + 1) : path;
}

/** The panel; focus (a turn's file, absolute) opens it at that file's diff, staged if only that has it. */
export function GitPanel(props: { s: Session; close: () => void; focus?: string }) {
  const s = props.s;
  const [status, setStatus] = useState<GitStatus | null>(null);
  const [diff, setDiff] = useState<GitDiff | null>(null);
  const [staged, setStaged] = useState(false);
  const [err, setErr] = useState('');
  const [loading, setLoading] = useState(false);
  // The changed-file count on the row moves: read again when it does.
  const changed = s.git?.changed ?? 0;
  const head = s.git?.head ?? '';
  useEffect(() => {
    let live = true;
    setLoading(true);
    Promise.all([api.gitStatus(s.id), api.gitDiff(s.id, staged ? { staged: true } : {})])
      .then(([st, d]) => {
        if (!live) return;
        setStatus(st);
        setDiff(d);
        setErr('');
      })
      .catch((e) => live && setErr(errorText(e)))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [s.id, staged, changed, head]);
  const files = status?.files ?? [];
  const want = props.focus && status ? inRoot(props.focus, status.root) : '';
  const shown = !!want && (diff?.files ?? []).some((f) => f.path === want);
  const triedStaged = useRef(false);
  // Not among the unstaged changes but staged: show the staged side, once.
  useEffect(() => {
    if (!want || shown || staged || triedStaged.current || loading || !diff) return;
    const f = files.find((x) => x.path === want);
    if (f && !f.untracked && f.index !== ' ' && f.index !== '.' && f.index !== '') {
      triedStaged.current = true;
      setStaged(true);
    }
  }, [want, shown, staged, loading, diff]);
  const body = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (!shown) return;
    body.current?.querySelector(`[data-testid="git-file-diff"][data-path="${CSS.escape(want)}"]`)?.scrollIntoView({ block: 'start' });
  }, [shown, want]);
  return (
    <Modal title="Git" onClose={props.close} variant="sheet" testid="git-panel" class="git-modal">
      {err && (
        <p class="form-error" role="alert" data-testid="git-error">
          {err}
        </p>
      )}
      {status && (
        <section class="git-summary" data-testid="git-summary">
          <p>
            <strong data-testid="git-branch">{status.branch || (status.detached ? 'detached HEAD' : '(no branch)')}</strong>
            {status.upstream && (
              <span class="muted">
                {' '}
                · {status.upstream} ({status.ahead ?? 0} ahead, {status.behind ?? 0} behind)
              </span>
            )}
            {status.worktree && <span class="tag">worktree</span>}
          </p>
          <p class="muted small" title={status.root}>
            {shortDir(status.root)} · {status.head ? status.head.slice(0, 10) : 'no commit yet'}
          </p>
          <p class="small" data-testid="git-counts">
            {status.changed === 0
              ? 'No changes.'
              : `${status.changed} changed: ${status.staged} staged, ${status.unstaged} unstaged, ${status.untracked} untracked${status.conflicted ? `, ${status.conflicted} in conflict` : ''}`}
          </p>
          {status.error && <p class="warn-text small">git: {status.error}</p>}
        </section>
      )}
      {files.length > 0 && (
        <ul class="git-files" data-testid="git-files">
          {files.map((f) => (
            <li key={f.path} class="git-file" data-testid="git-file" data-path={f.path}>
              <code class="git-letters" title="staged, unstaged">
                {letters(f)}
              </code>
              <span class="git-path">{f.old_path ? `${f.old_path} → ${f.path}` : f.path}</span>
            </li>
          ))}
        </ul>
      )}
      <div class="btn-row git-sides" role="group" aria-label="Which changes">
        <button
          type="button"
          class={`btn btn-small${staged ? '' : ' active'}`}
          aria-pressed={!staged}
          onClick={() => setStaged(false)}
          data-testid="git-unstaged"
        >
          Unstaged
        </button>
        <button
          type="button"
          class={`btn btn-small${staged ? ' active' : ''}`}
          aria-pressed={staged}
          onClick={() => setStaged(true)}
          data-testid="git-staged"
        >
          Staged
        </button>
        {loading && <span class="muted small">Loading…</span>}
      </div>
      {diff && (diff.files ?? []).length === 0 && <p class="muted">No {staged ? 'staged' : 'unstaged'} changes.</p>}
      {diff?.truncated && <p class="warn-text small">The diff is too long: some files are cut or left out.</p>}
      {want && diff && !loading && !shown && (
        <p class="muted small" data-testid="git-focus-none">
          {want} has no {staged ? 'staged' : 'unstaged'} changes (committed since, or changed back).
        </p>
      )}
      <div class="git-diffs" data-testid="git-diff" ref={body}>
        {(diff?.files ?? []).map((f) => (
          <PatchView key={`${f.old_path ?? ''}>${f.path}`} f={f} focused={f.path === want} />
        ))}
      </div>
    </Modal>
  );
}

function letters(f: GitFile): string {
  if (f.untracked) return '??';
  return `${f.index}${f.worktree}`;
}

/** One file of git's diff, drawn with the timeline's diff styles. */
function PatchView(props: { f: GitFileDiff; focused?: boolean }) {
  const f = props.f;
  const [all, setAll] = useState(false);
  const lines: { cls: string; text: string }[] = [];
  let body = false;
  for (const l of f.patch.split('\n')) {
    if (l.startsWith('@@')) body = true;
    if (!body || l.startsWith('\\')) continue;
    lines.push({ cls: l.startsWith('@@') ? 'hunk' : l[0] === '+' ? 'add' : l[0] === '-' ? 'del' : 'ctx', text: l });
  }
  if (lines.length > 0 && lines[lines.length - 1]?.text === '') lines.pop();
  const shown = all ? lines : lines.slice(0, MAX_PATCH_LINES);
  return (
    <div
      class={`diff${props.focused ? ' git-focus' : ''}`}
      data-testid="git-file-diff"
      data-path={f.path}
      data-focused={props.focused ? 'true' : undefined}
    >
      <div class="diff-head">
        <span class="diff-path" title={f.path}>
          <code class="git-letters">{f.status}</code> {f.old_path ? `${f.old_path} → ${f.path}` : f.path}
        </span>
        <span class="diff-stat">
          <span class="add">+{f.added}</span> <span class="del">−{f.removed}</span>
        </span>
      </div>
      {f.binary ? (
        <p class="muted small">Binary file.</p>
      ) : (
        <pre class="diff-body">
          {shown.map((l, i) => (
            <div key={i} class={`dl dl-${l.cls}`}>
              {l.text || ' '}
            </div>
          ))}
        </pre>
      )}
      {(lines.length > shown.length || f.truncated) && (
        <button type="button" class="link-btn small" onClick={() => setAll(true)} disabled={all || lines.length <= shown.length}>
          {f.truncated ? 'The patch was cut by the server' : `Show all ${lines.length} lines`}
        </button>
      )}
    </div>
  );
}
