import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, errorText } from '../api';
import {
  closeSession,
  deviceNamed,
  gitFocus,
  markViewed,
  narrow,
  now,
  removeSession,
  setTab,
  tab,
  toast,
  toastError,
  upsertSession,
} from '../store';
import type { Tab } from '../store';
import { dialogSummary, feedbackOption, hasDialog } from '../dialog';
import type { Session } from '../types';
import { ago, cost, modelName, shortDir, STATUS_LABEL, subagentsTitle, todosTitle } from '../util';
import { DownloadDialog } from './Download';
import { GitPanel } from './GitPanel';
import { Icon } from './Icon';
import { Modal } from './Modal';
import { NeedsInputCard } from './NeedsInput';
import { SessionDot } from './StatusDot';
import { TerminalView } from './TerminalView';
import { Timeline } from './Timeline';
import { ContextBar, UsagePanel } from './Usage';

export function SessionView(props: { s: Session }) {
  const s = props.s;
  const t = tab.value;
  const [showUsage, setShowUsage] = useState(false);
  return (
    <div
      class={`session-view${s.offline ? ' offline' : ''}`}
      data-session-id={s.id}
      data-status={s.status}
      data-offline={s.offline ? 'true' : undefined}
    >
      <SessionHeader s={s} showUsage={showUsage} toggleUsage={() => setShowUsage(!showUsage)} />
      {s.offline && <OfflineBanner s={s} />}
      {showUsage && <UsagePanel s={s} />}
      <Announcer s={s} />
      {hasDialog(s) && (
        <NeedsInputCard s={s} autoFocus={!narrow.value} promptBoxAnswers={t === 'timeline' && !!feedbackOption(s.waiting_for)} />
      )}
      {s.status === 'exited' && s.kind === 'claude' && <ExitedBanner s={s} />}
      {s.error && s.status !== 'exited' && s.status !== 'needs-input' && (
        <div class="error-banner" role="alert">
          <strong>The last turn failed: {s.error}</strong>
          {s.error_message && <span> — {s.error_message}</span>}
        </div>
      )}
      <div
        class="tabs"
        role="tablist"
        aria-label="View"
        onKeyDown={(e) => {
          if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
          e.preventDefault();
          const next = t === 'terminal' ? 'timeline' : 'terminal';
          setTab(next);
          document.getElementById(`tab-${next}`)?.focus();
        }}
      >
        <TabButton tab="terminal" current={t} setTab={setTab} icon="term" label="Terminal" keys="g t" s={s} />
        <TabButton tab="timeline" current={t} setTab={setTab} icon="list" label="Timeline" keys="g l" s={s} />
      </div>
      <div class="panels">
        <div class="panel" role="tabpanel" id="panel-terminal" aria-labelledby="tab-terminal" hidden={t !== 'terminal'}>
          <TerminalView s={s} visible={t === 'terminal'} />
        </div>
        <div class="panel" role="tabpanel" id="panel-timeline" aria-labelledby="tab-timeline" hidden={t !== 'timeline'}>
          <Timeline s={s} visible={t === 'timeline'} />
        </div>
      </div>
    </div>
  );
}

// TabButton is one tab of the session's view (ARIA tabs: the current one
// is focusable, arrows move between them).
function TabButton(props: {
  tab: Tab;
  current: Tab;
  setTab: (t: Tab) => void;
  icon: 'term' | 'list';
  label: string;
  keys: string;
  s: Session;
}) {
  const on = props.current === props.tab;
  return (
    <button
      type="button"
      role="tab"
      id={`tab-${props.tab}`}
      class="tab"
      data-testid={`tab-${props.tab}`}
      aria-selected={on}
      tabIndex={on ? 0 : -1}
      aria-controls={`panel-${props.tab}`}
      title={`${props.label} (${props.keys})`}
      onClick={() => props.setTab(props.tab)}
    >
      <Icon name={props.icon} size={14} /> {props.label}
      {/* The session's state on each tab: a dialog shows from either. */}
      <span class="tab-dot" data-testid={`tab-dot-${props.tab}`} data-status={props.s.status}>
        <SessionDot s={props.s} />
      </span>
    </button>
  );
}

function SessionHeader(props: { s: Session; showUsage: boolean; toggleUsage: () => void }) {
  const s = props.s;
  const [editing, setEditing] = useState(false);
  const [killing, setKilling] = useState(false);
  const [gitOpen, setGitOpen] = useState(false);
  const [downloading, setDownloading] = useState(false);
  // A turn's file clicked in the timeline opens the panel at its diff.
  const focus = gitFocus.value?.session === s.id ? gitFocus.value.path : '';
  const closeGit = () => {
    setGitOpen(false);
    if (gitFocus.value) gitFocus.value = null;
  };
  const off = !!s.offline;
  const offTitle = 'The machine is offline';
  const model = modelName(s);
  const ctx = s.usage?.context_percent;
  const c = s.usage?.cost_usd;
  return (
    <header class="session-head">
      <h2 class="sr-only">{s.name || s.id}</h2>
      <div class="sh-line1">
        <SessionDot s={s} size="md" />
        {editing ? (
          <RenameField s={s} done={() => setEditing(false)} />
        ) : (
          <button
            type="button"
            class="sh-name"
            title={off ? s.name : 'Rename'}
            aria-label={off ? s.name : `Rename ${s.name}`}
            disabled={off}
            onClick={() => setEditing(true)}
            data-testid="session-name"
          >
            {s.name || s.id}
          </button>
        )}
        {off ? (
          <span
            class="status-chip st-offline"
            data-testid="offline-badge"
            title={`The machine is offline; last known status: ${STATUS_LABEL[s.status] ?? s.status}`}
          >
            Offline
          </span>
        ) : (
          <span class={`status-chip st-${s.status}`} data-testid="session-status">
            {STATUS_LABEL[s.status] ?? s.status}
            {s.compacting ? ' · compacting' : ''}
          </span>
        )}
        <span class="sh-actions">
          {s.status === 'review' && !off && (
            <button type="button" class="btn btn-small" onClick={() => markViewed(s.id)} data-testid="mark-seen">
              <Icon name="check" size={14} /> Mark seen
            </button>
          )}
          <button
            type="button"
            class={`btn btn-small btn-ghost${props.showUsage ? ' active' : ''}`}
            aria-expanded={props.showUsage}
            onClick={props.toggleUsage}
            title="Usage"
          >
            <Icon name="chart" size={14} />
            {!narrow.value && ' Usage'}
          </button>
          {s.git && (
            <button
              type="button"
              class="btn btn-small btn-ghost"
              onClick={() => setGitOpen(true)}
              disabled={off}
              data-testid="open-git"
              title={off ? offTitle : 'Git: status and diff of this folder'}
            >
              <Icon name="git" size={14} />
              {!narrow.value && ` ${s.git.branch || 'Git'}`}
              {s.git.changed > 0 && <span class="row-changed"> ±{s.git.changed}</span>}
            </button>
          )}
          <button
            type="button"
            class="btn btn-small btn-ghost"
            onClick={() => setDownloading(true)}
            disabled={off}
            data-testid="download"
            aria-label="Fetch a file into this session's folder"
            title={off ? offTitle : "Fetch a file (from a URL) into this session's folder"}
          >
            <Icon name="download" size={14} />
            {!narrow.value && ' Fetch a file'}
          </button>
          <button
            type="button"
            class="btn btn-small btn-danger-ghost"
            onClick={() => setKilling(true)}
            disabled={off}
            title={off ? offTitle : 'Kill session'}
            data-testid="kill"
            aria-label="Kill session"
          >
            <Icon name="trash" size={14} />
            {!narrow.value && ' Kill'}
          </button>
        </span>
      </div>
      <div class="sh-line2">
        <span class="sh-dir" title={s.dir}>
          {shortDir(s.dir)}
        </span>
        <span class="sep">·</span>
        <span class="sh-kind">{s.kind}</span>
        {s.device && (
          <>
            <span class="sep">·</span>
            <span>{s.device}</span>
          </>
        )}
        {model && (
          <>
            <span class="sep">·</span>
            <span class="sh-model" title={s.usage?.model}>
              {model}
            </span>
          </>
        )}
        {ctx !== undefined && ctx !== null && (
          <>
            <span class="sep">·</span>
            <ContextBar percent={ctx} />
          </>
        )}
        {c !== undefined && c !== null && (
          <>
            <span class="sep">·</span>
            <span class="sh-cost" title="Cost of this Claude session">
              {cost(c)}
            </span>
          </>
        )}
        <WorkInfo s={s} />
      </div>
      {killing && <KillConfirm s={s} close={() => setKilling(false)} />}
      {(gitOpen || focus) && <GitPanel s={s} close={closeGit} focus={focus} />}
      {downloading && <DownloadDialog s={s} close={() => setDownloading(false)} />}
    </header>
  );
}

/** The subagents running and the TodoWrite progress, when Claude has them. */
function WorkInfo(props: { s: Session }) {
  const s = props.s;
  const subs = s.subagents ?? [];
  const todos = s.todos;
  return (
    <>
      {subs.length > 0 && (
        <>
          <span class="sep">·</span>
          <span class="sh-subagents" data-testid="subagents" title={subagentsTitle(s)}>
            {subs.length} subagent{subs.length === 1 ? '' : 's'}
          </span>
        </>
      )}
      {todos && todos.total > 0 && (
        <>
          <span class="sep">·</span>
          <span class="sh-todos" data-testid="todos" title={todosTitle(s)}>
            Todos {todos.done}/{todos.total}
            {todos.current ? `: ${todos.current}` : ''}
          </span>
        </>
      )}
    </>
  );
}

/**
 * Says it when a session starts waiting on a dialog, and which (a polite
 * live region: always in the page, its text changes).
 */
function Announcer(props: { s: Session }) {
  const s = props.s;
  const text = hasDialog(s) ? `${s.name} needs input: ${dialogSummary(s.waiting_for)}` : '';
  return (
    <div class="sr-only" aria-live="polite" aria-atomic="true" data-testid="needs-announce">
      {text}
    </div>
  );
}

/** Claude has exited in the pane: start it again, new or resuming its conversation. */
function ExitedBanner(props: { s: Session }) {
  const s = props.s;
  const [busy, setBusy] = useState<'' | 'restart' | 'resume'>('');
  const [error, setError] = useState('');
  const off = !!s.offline;
  const restart = (resume: boolean) => {
    if (busy || off) return;
    setBusy(resume ? 'resume' : 'restart');
    setError('');
    api
      .restart(s.id, resume)
      .then((n) => {
        if (n && n.id) upsertSession(n);
      })
      .catch((e) => setError(errorText(e)))
      .finally(() => setBusy(''));
  };
  return (
    <div class="exited-banner" role="status" data-testid="exited-banner">
      <span class="exited-text">
        <strong>Claude has exited.</strong>{' '}
        {s.claude_session_id ? 'Start it again in a new conversation, or resume the last one.' : 'Start it again here.'}
      </span>
      <span class="exited-actions">
        <button
          type="button"
          class="btn btn-small btn-primary"
          data-testid="restart"
          disabled={!!busy || off}
          onClick={() => restart(false)}
          title="Start Claude again in this session, in a new conversation"
        >
          {busy === 'restart' ? 'Restarting…' : 'Restart'}
        </button>
        {s.claude_session_id && (
          <button
            type="button"
            class="btn btn-small"
            data-testid="resume"
            disabled={!!busy || off}
            onClick={() => restart(true)}
            title={`Start Claude again, resuming conversation ${s.claude_session_id}`}
          >
            {busy === 'resume' ? 'Resuming…' : 'Resume'}
          </button>
        )}
      </span>
      {error && (
        <span class="form-error exited-error" role="alert" data-testid="restart-error">
          {error}
        </span>
      )}
    </div>
  );
}

function OfflineBanner(props: { s: Session }) {
  const s = props.s;
  const dev = deviceNamed(s.device);
  const seen = dev && !dev.online && dev.last_seen ? ago(dev.last_seen, now.value) : '';
  return (
    <div class="offline-banner" role="status" data-testid="offline-banner">
      <Icon name="offline" size={16} />
      <span>
        <strong>{s.device || 'The machine'} is offline</strong>
        {seen ? ` (last seen ${seen})` : ''}: showing the last known state ({STATUS_LABEL[s.status] ?? s.status}) until it is back.
      </span>
    </div>
  );
}

function RenameField(props: { s: Session; done: () => void }) {
  const [v, setV] = useState(props.s.name);
  const [saving, setSaving] = useState(false);
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    ref.current?.focus();
    ref.current?.select();
  }, []);
  const save = () => {
    const name = v.trim();
    if (!name || name === props.s.name) {
      props.done();
      return;
    }
    setSaving(true);
    api
      .rename(props.s.id, name)
      .then((s) => {
        if (s && s.id) upsertSession(s);
        props.done();
      })
      .catch((e) => {
        toast(`Rename failed: ${errorText(e)}`);
        setSaving(false);
      });
  };
  return (
    <form
      class="rename"
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
    >
      <input
        ref={ref}
        class="input rename-input"
        value={v}
        maxLength={200}
        aria-label="Session name"
        disabled={saving}
        onInput={(e) => setV((e.target as HTMLInputElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            props.done();
          } else if (e.key === 'Enter' && !e.isComposing) {
            e.preventDefault();
            save();
          }
        }}
        onBlur={() => !saving && save()}
      />
    </form>
  );
}

function KillConfirm(props: { s: Session; close: () => void }) {
  const s = props.s;
  const [busy, setBusy] = useState(false);
  // corral made this worktree for the session: killing it may remove it too (docs/git.md).
  const [remove, setRemove] = useState(!!s.worktree);
  const [dirty, setDirty] = useState('');
  const kill = (force: boolean) => {
    setBusy(true);
    api
      .kill(s.id, remove && s.worktree ? { remove_worktree: true, force: force || undefined } : {})
      .then(() => {
        removeSession(s.id);
        props.close();
        closeSession();
        if (remove && s.worktree)
          toast(`Removed the worktree ${shortDir(s.worktree.path)} (branch ${s.worktree.branch} stays)`, 'info', 4000);
      })
      .catch((e) => {
        setBusy(false);
        // Uncommitted changes: nothing was done; say which, and offer to lose them.
        if (e instanceof ApiError && e.code === 'worktree_dirty') setDirty(errorText(e));
        else toastError('Kill failed')(e);
      });
  };
  return (
    <Modal
      title="Kill session?"
      onClose={props.close}
      testid="kill-dialog"
      initialFocus=".btn-cancel"
      footer={
        <>
          <button type="button" class="btn btn-cancel" onClick={props.close}>
            Cancel
          </button>
          {dirty && (
            <button type="button" class="btn btn-danger-ghost" disabled={busy} onClick={() => kill(true)} data-testid="kill-force">
              Remove anyway (loses the changes)
            </button>
          )}
          <button type="button" class="btn btn-danger" disabled={busy} onClick={() => kill(false)} data-testid="kill-confirm">
            {busy ? 'Killing…' : 'Kill'}
          </button>
        </>
      }
    >
      <p>
        <strong>{s.name}</strong> will be closed: its tmux session ends and whatever runs in it is stopped.
      </p>
      <p class="muted small">{shortDir(s.dir)}</p>
      {s.worktree && (
        <label class="check">
          <input
            type="checkbox"
            checked={remove}
            onChange={(e) => {
              setRemove((e.target as HTMLInputElement).checked);
              setDirty('');
            }}
            data-testid="kill-remove-worktree"
          />
          <span>
            Also remove its worktree (<code>{shortDir(s.worktree.path)}</code>); the branch <code>{s.worktree.branch}</code> stays
          </span>
        </label>
      )}
      {dirty && (
        <p class="form-error" role="alert" data-testid="worktree-dirty">
          Not killed: {dirty}. Commit or stash them, untick the box to keep the worktree, or remove it anyway.
        </p>
      )}
    </Modal>
  );
}
