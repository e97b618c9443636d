// The Git panel of a session: the status of its folder (branch, upstream,
// changed files) and the diff, unstaged or staged, drawn like the
// timeline's edits (docs/git.md: git_status, git_diff).

import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api';
import type { GitDiff, GitFile, GitFileDiff, GitStatus, Session } from '../types';
import { shortDir } from '../util';
import { Modal } from './Modal';

const MAX_PATCH_LINES = 800;

export function GitPanel(props: { s: Session; close: () => void }) {
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
      <div class="git-diffs" data-testid="git-diff">
        {(diff?.files ?? []).map((f) => (
          <PatchView key={`${f.old_path ?? ''}>${f.path}`} f={f} />
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
function PatchView(props: { f: GitFileDiff }) {
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
    <div class="diff" data-testid="git-file-diff" data-path={f.path}>
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
