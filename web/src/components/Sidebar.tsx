import { useState } from 'preact/hooks';
import {
  devicesLoaded,
  filteredMachineGroups,
  loaded,
  machineMode,
  multiUser,
  narrow,
  needsYou,
  now,
  openNewSession,
  openSession,
  selectedId,
  pinnedSessions,
  pins,
  type ProjectGroup,
  projectGroups,
  type SortMode,
  type StateFilter,
  sessions,
  setSortMode,
  sortMode,
  stateFilter,
  textFilter,
  togglePin,
  type MachineGroup,
} from '../store';
import type { DeviceConflict, Session } from '../types';
import { activity, ago, clock, cost, parseTime, pct, rollup, shortDir, subagentsTitle, todosTitle } from '../util';
import { Icon } from './Icon';
import { NeedsInputCard } from './NeedsInput';
import { SessionDot, StatusDot } from './StatusDot';

export function Counts() {
  const n = sessions.value.length;
  const need = needsYou.value.length;
  // What the sessions listed here cost today: each agent prices its transcripts' responses of its own local day.
  const today = costToday(sessions.value);
  return (
    <div class="counts" aria-live="polite">
      <span>
        {n} session{n === 1 ? '' : 's'}
      </span>
      {need > 0 && (
        <span class="counts-need">
          {' · '}
          {need} need{need === 1 ? 's' : ''} you
        </span>
      )}
      {today.usd > 0 && (
        <span class="counts-cost" data-testid="total-cost" title={today.title}>
          {' · '}
          {cost(today.usd)} today
        </span>
      )}
    </div>
  );
}

/** The cost today of the sessions listed, and a title that says what it counts. */
export function costToday(list: Session[]): { usd: number; title: string } {
  let usd = 0;
  let n = 0;
  let unpriced = 0;
  for (const s of list) {
    const c = s.usage?.cost_today_usd ?? 0;
    if (c > 0) n++;
    usd += c;
    unpriced += s.usage?.today_unpriced ?? 0;
  }
  let title =
    `Cost today: the API responses written since midnight (each machine's local time) in the transcripts of the sessions listed here and of their subagents ` +
    `(${n} of them cost something today), at Anthropic's list prices: $${usd.toFixed(4)}. Sessions no longer listed are not counted.`;
  if (unpriced > 0) title += ` ${unpriced} response${unpriced === 1 ? '' : 's'} of a model without a known price left out.`;
  return { usd, title };
}

export function NewSessionButton(props: { compact?: boolean; testid?: string }) {
  return (
    <button
      type="button"
      class={props.compact ? 'icon-btn' : 'btn btn-primary btn-new'}
      data-testid={props.testid ?? 'new-session'}
      aria-label="New session"
      title="New session (n)"
      onClick={() => openNewSession()}
    >
      <Icon name="plus" />
      {!props.compact && <span>New session</span>}
    </button>
  );
}

/** Filter by text and state, and the "needs me first" sort. */
export function ListTools() {
  if (sessions.value.length === 0) return null;
  return (
    <div class="list-tools" data-testid="list-tools">
      <input
        class="input input-sm"
        type="search"
        placeholder="Filter"
        aria-label="Filter sessions by name, folder or branch"
        value={textFilter.value}
        data-testid="filter-text"
        onInput={(e) => (textFilter.value = (e.target as HTMLInputElement).value.slice(0, 200))}
      />
      <select
        class="input input-sm"
        aria-label="Show sessions in this state"
        value={stateFilter.value}
        data-testid="filter-state"
        onChange={(e) => (stateFilter.value = (e.target as HTMLSelectElement).value as StateFilter)}
      >
        <option value="all">All</option>
        <option value="attention">Needs me</option>
        <option value="busy">Busy</option>
        <option value="idle">Idle</option>
        <option value="exited">Exited</option>
      </select>
      <select
        class="input input-sm"
        aria-label="Order"
        value={sortMode.value}
        data-testid="sort-mode"
        onChange={(e) => setSortMode((e.target as HTMLSelectElement).value as SortMode)}
      >
        <option value="created">Oldest first</option>
        <option value="needs">Needs me first</option>
      </select>
    </div>
  );
}

/** The list of sessions: pinned ones, then by project; on a hub, grouped by machine, every machine shown. */
export function SessionList() {
  const list = sessions.value;
  if (!loaded.value) {
    return <div class="list-empty">Loading sessions…</div>;
  }
  if (machineMode.value) {
    const groups = filteredMachineGroups.value;
    if (groups.length === 0) {
      return (
        <div class="list-empty">
          <p>{devicesLoaded.value || !multiUser.value ? 'No machines yet.' : 'Loading machines…'}</p>
          {devicesLoaded.value && (
            <p class="muted small">
              Add one on the hub with <code>corral hub device add NAME --user USER</code>, then run <code>corral agent</code> on it with the
              token that prints.
            </p>
          )}
        </div>
      );
    }
    return (
      <div class="groups">
        {groups.map((g) => (
          <Group key={g.name} g={g} />
        ))}
      </div>
    );
  }
  if (list.length === 0) {
    return (
      <div class="list-empty">
        <p>No sessions yet.</p>
        <p class="muted">Start one with “New session”.</p>
      </div>
    );
  }
  const pinned = pinnedSessions.value;
  const groups = projectGroups.value;
  if (pinned.length === 0 && groups.length === 0) {
    return (
      <div class="list-empty">
        <p>No session matches.</p>
      </div>
    );
  }
  return (
    <div class="groups">
      {pinned.length > 0 && (
        <section class="group project-group" data-testid="pinned-group">
          <h3 class="group-head">
            <span class="group-toggle group-static">
              <span class="group-name">Pinned</span>
              <span class="group-count">{pinned.length}</span>
            </span>
          </h3>
          <ul class="session-list" aria-label="Pinned sessions">
            {pinned.map((s) => (
              <Row key={s.id} s={s} />
            ))}
          </ul>
        </section>
      )}
      {groups.map((g) => (
        <ProjectSection key={g.key} g={g} />
      ))}
    </div>
  );
}

/** One project (a repository, or a folder): its sessions, under a dot of the most urgent state. */
function ProjectSection(props: { g: ProjectGroup; device?: string }) {
  const g = props.g;
  const [open, setOpen] = useState(true);
  // Under a machine's h3 on a hub, else under the list's h2.
  const H = props.device ? 'h4' : 'h3';
  const id = `proj-${props.device ? `${props.device}-` : ''}${g.key}`.replace(/\W+/g, '-');
  return (
    <section
      class="group project-group"
      data-testid="project-group"
      data-project={g.key}
      data-status={g.status}
      data-error={g.error ? 'true' : undefined}
    >
      <H class="group-head">
        <button
          type="button"
          class="group-toggle"
          aria-expanded={open}
          aria-controls={id}
          title={shortDir(g.key)}
          data-testid="project-toggle"
          onClick={() => setOpen(!open)}
        >
          <Icon name="chevron" class={open ? 'rot90' : ''} size={12} />
          <span class="group-name">{g.name}</span>
          <span data-testid="project-dot" data-status={g.status}>
            <StatusDot status={g.status} error={g.error} />
          </span>
          <span class="group-count">{g.list.length}</span>
        </button>
      </H>
      {open && (
        <ul class="session-list" id={id} aria-label={`Sessions in ${g.name}`}>
          {g.list.map((s) => (
            <Row key={s.id} s={s} />
          ))}
        </ul>
      )}
    </section>
  );
}

function Group(props: { g: MachineGroup & { projects: ProjectGroup[] } }) {
  const { name, device, list, projects } = props.g;
  const [open, setOpen] = useState(true);
  // A machine we only know from its sessions counts as online unless they say otherwise.
  const online = device ? device.online : !list.every((s) => s.offline);
  const r = rollup(list);
  const id = `grp-${name.replace(/\W+/g, '-')}`;
  const seen = !online && device?.last_seen ? ago(device.last_seen, now.value) : '';
  const where = [device?.hostname && device.hostname !== name ? device.hostname : '', device?.os, device?.version]
    .filter(Boolean)
    .join(' · ');
  const never = !online && !!device && !device.last_seen;
  const title = `${name}: ${online ? 'online' : never ? 'offline, never connected' : 'offline'}${seen ? `, last seen ${seen}` : ''}${where ? ` (${where})` : ''}`;
  return (
    <section
      class={`group${online ? '' : ' group-offline'}`}
      data-testid="device-group"
      data-device={name}
      data-status={list.length ? r.status : 'none'}
      data-online={online ? 'true' : 'false'}
    >
      <h3 class="group-head">
        <button
          type="button"
          class="group-toggle"
          aria-expanded={open}
          aria-controls={id}
          title={title}
          data-testid="device-item"
          data-device={name}
          data-online={online ? 'true' : 'false'}
          onClick={() => setOpen(!open)}
        >
          <Icon name="chevron" class={open ? 'rot90' : ''} size={12} />
          <span class={`dev-state ${online ? 'dev-online' : 'dev-offline'}`} role="img" aria-label={online ? 'online' : 'offline'} />
          <span class="group-name">{name}</span>
          {!online && <span class="group-seen">{seen ? `offline · ${seen}` : never ? 'never connected' : 'offline'}</span>}
          {list.length > 0 && online && <StatusDot status={r.status} error={r.error} />}
          <span class="group-count">{list.length}</span>
        </button>
        {online && (
          <button
            type="button"
            class="icon-btn group-new"
            aria-label={`New session on ${name}`}
            title={`New session on ${name}`}
            onClick={() => openNewSession(name)}
          >
            <Icon name="plus" size={14} />
          </button>
        )}
      </h3>
      {device?.conflict && <ConflictLine name={name} c={device.conflict} />}
      {open && list.length > 0 && (
        <div class="device-projects" id={id} role="group" aria-label={`Sessions on ${name}`}>
          {projects.map((p) => (
            <ProjectSection key={p.key} g={p} device={name} />
          ))}
        </div>
      )}
      {open && list.length === 0 && (
        <p class="group-empty muted small" id={id}>
          {online ? 'No sessions.' : 'No sessions known.'}
        </p>
      )}
    </section>
  );
}

/** Another machine holds this one's key: someone copied its data directory, or stole its identity. */
function ConflictLine(props: { name: string; c: DeviceConflict }) {
  const { name, c } = props;
  const from = [c.hostname ? `host ${c.hostname}` : '', c.address ? `from ${c.address}` : ''].filter(Boolean).join(', ');
  const times = c.count > 1 ? `${c.count} times, ` : '';
  return (
    <p
      class="group-conflict small"
      role="alert"
      data-testid="device-conflict"
      data-device={name}
      title={`The hub refused its connection ${times}last ${ago(c.at, now.value)}${from ? ` (${from})` : ''}. If this machine's data directory was copied, give the copy a new key; if not, revoke ${name} on the hub and enrol it again.`}
    >
      another machine is using {name}'s identity
    </p>
  );
}

function Row(props: { s: Session }) {
  const s = props.s;
  const [respond, setRespond] = useState(false);
  const isSel = selectedId.value === s.id;
  const off = !!s.offline;
  const busyMs = s.status === 'busy' && !off ? parseTime(s.busy_since) : 0;
  const ctx = s.usage?.context_percent;
  const act = activity(s);
  const needs = s.status === 'needs-input';
  const subs = s.subagents?.length ?? 0;
  const todos = s.todos;
  const pinned = pins.value.includes(s.id);
  return (
    <li class={`row-wrap${isSel ? ' selected' : ''}${off ? ' offline' : ''}`}>
      <div class="row-box">
        <a
          class={`row status-${s.status}${s.error ? ' has-error' : ''}`}
          href={`#/s/${encodeURIComponent(s.id)}`}
          data-testid="session-row"
          data-session-id={s.id}
          data-status={s.status}
          data-offline={off ? 'true' : undefined}
          aria-current={isSel ? 'page' : undefined}
          onClick={(e) => {
            if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
            e.preventDefault();
            openSession(s.id);
          }}
        >
          <span class="row-dot">
            <SessionDot s={s} />
          </span>
          <span class="row-main">
            <span class="row-line1">
              <span class="row-name">{s.name || s.id}</span>
              {s.kind === 'shell' && <span class="tag">shell</span>}
              {s.kind === 'external' && <span class="tag">ext</span>}
              {off && (
                <span class="tag tag-offline" data-testid="offline-badge" title="The machine is offline: this is the last known state">
                  offline
                </span>
              )}
              <span class="row-meta">
                {busyMs > 0 && (
                  <span class="busy-time" data-testid="busy-time" title="Busy for">
                    {clock((now.value - busyMs) / 1000)}
                  </span>
                )}
                {subs > 0 && (
                  <span
                    class="row-subagents"
                    data-testid="row-subagents"
                    title={subagentsTitle(s)}
                    aria-label={`${subs} subagent${subs === 1 ? '' : 's'} running`}
                  >
                    <Icon name="agents" size={11} /> {subs}
                  </span>
                )}
                {todos && todos.total > 0 && (
                  <span class="row-todos" data-testid="row-todos" title={todosTitle(s)}>
                    {todos.done}/{todos.total}
                  </span>
                )}
                {ctx !== undefined && ctx > 0 && (
                  <span class={`ctx${ctx >= 80 ? ' ctx-high' : ''}`} title="Context window used">
                    {pct(ctx)}
                  </span>
                )}
              </span>
            </span>
            <span class="row-dir" title={s.dir}>
              {shortDir(s.dir)}
              {s.git && (
                <span class="row-git" data-testid="row-git" title={gitTitle(s)}>
                  {' · '}
                  {s.git.branch || (s.git.detached ? 'detached' : '')}
                  {s.git.changed > 0 && (
                    <span class="row-changed" data-testid="row-changed">
                      {' '}
                      ±{s.git.changed}
                    </span>
                  )}
                </span>
              )}
            </span>
            {act && (
              <span class={`row-act${needs && !off ? ' act-needs' : ''}${s.error && !off ? ' act-error' : ''}`} title={act}>
                {act}
              </span>
            )}
          </span>
        </a>
        <button
          type="button"
          class={`icon-btn pin-btn${pinned ? ' pinned' : ''}`}
          aria-pressed={pinned}
          aria-label={pinned ? `Unpin ${s.name}` : `Pin ${s.name}`}
          title={pinned ? 'Unpin' : 'Pin to the top'}
          data-testid="pin"
          onClick={() => togglePin(s.id)}
        >
          <Icon name="pin" size={13} />
        </button>
        {needs && !isSel && !off && (
          <button
            type="button"
            class="respond-btn"
            aria-expanded={respond}
            aria-label={`Respond to ${s.name}`}
            onClick={() => setRespond(!respond)}
          >
            {respond ? 'Hide' : 'Respond'}
          </button>
        )}
      </div>
      {needs && respond && !isSel && !off && (
        <div class="inline-card">
          <NeedsInputCard s={s} compact testid="needs-input-card-inline" />
        </div>
      )}
    </li>
  );
}

/** The sidebar (desktop) or the drawer (phone). */
export function Sidebar() {
  return (
    <nav class="sidebar" aria-label="Sessions">
      <div class="sidebar-head">
        <Counts />
        {!narrow.value && <NewSessionButton />}
      </div>
      <ListTools />
      <div class="sidebar-list">
        <h2 class="sr-only">Sessions</h2>
        <SessionList />
      </div>
    </nav>
  );
}

function gitTitle(s: Session): string {
  const g = s.git;
  if (!g) return '';
  const parts = [g.branch ? `branch ${g.branch}` : g.detached ? 'detached HEAD' : ''];
  if (g.changed) parts.push(`${g.changed} changed (${g.staged} staged, ${g.unstaged} unstaged, ${g.untracked} untracked)`);
  else parts.push('no changes');
  if (g.ahead || g.behind) parts.push(`${g.ahead ?? 0} ahead, ${g.behind ?? 0} behind ${g.upstream ?? ''}`.trim());
  if (s.worktree) parts.push(`worktree of ${shortDir(s.worktree.repo)}`);
  if (g.error) parts.push(`git: ${g.error}`);
  return parts.filter(Boolean).join(' · ');
}
