import { useState } from 'preact/hooks';
import {
  config,
  hasDevices,
  loaded,
  narrow,
  needsYou,
  newSessionOpen,
  now,
  openSession,
  selectedId,
  sessions,
} from '../store';
import type { Session } from '../types';
import { activity, clock, parseTime, pct, rollup, shortDir } from '../util';
import { Icon } from './Icon';
import { NeedsInputCard } from './NeedsInput';
import { SessionDot, StatusDot } from './StatusDot';

export function Counts() {
  const n = sessions.value.length;
  const need = needsYou.value.length;
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
    </div>
  );
}

export function NewSessionButton(props: { compact?: boolean; testid?: string }) {
  return (
    <button
      type="button"
      class={props.compact ? 'icon-btn' : 'btn btn-primary btn-new'}
      data-testid={props.testid ?? 'new-session'}
      aria-label="New session"
      title="New session (n)"
      onClick={() => (newSessionOpen.value = true)}
    >
      <Icon name="plus" />
      {!props.compact && <span>New session</span>}
    </button>
  );
}

/** The list of sessions, grouped by machine when sessions carry a device. */
export function SessionList() {
  const list = sessions.value;
  if (!loaded.value) {
    return <div class="list-empty">Loading sessions…</div>;
  }
  if (list.length === 0) {
    return (
      <div class="list-empty">
        <p>No sessions yet.</p>
        <p class="muted">Start one with “New session”.</p>
      </div>
    );
  }
  if (!hasDevices.value) {
    return (
      <ul class="session-list" aria-label="Sessions">
        {list.map((s) => (
          <Row key={s.id} s={s} />
        ))}
      </ul>
    );
  }
  const groups = new Map<string, Session[]>();
  const local = config.value.hostname || 'this machine';
  for (const s of list) {
    const k = s.device || local;
    const g = groups.get(k);
    if (g) g.push(s);
    else groups.set(k, [s]);
  }
  return (
    <div class="groups">
      {[...groups.entries()].map(([dev, g]) => (
        <Group key={dev} name={dev} list={g} />
      ))}
    </div>
  );
}

function Group(props: { name: string; list: Session[] }) {
  const [open, setOpen] = useState(true);
  const r = rollup(props.list);
  const id = `grp-${props.name.replace(/\W+/g, '-')}`;
  return (
    <section class="group" data-testid="device-group" data-device={props.name} data-status={r.status}>
      <h3 class="group-head">
        <button type="button" class="group-toggle" aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)}>
          <Icon name="chevron" class={open ? 'rot90' : ''} size={12} />
          <StatusDot status={r.status} error={r.error} />
          <span class="group-name">{props.name}</span>
          <span class="group-count">{props.list.length}</span>
        </button>
      </h3>
      {open && (
        <ul class="session-list" id={id} aria-label={`Sessions on ${props.name}`}>
          {props.list.map((s) => (
            <Row key={s.id} s={s} />
          ))}
        </ul>
      )}
    </section>
  );
}

function Row(props: { s: Session }) {
  const s = props.s;
  const [respond, setRespond] = useState(false);
  const isSel = selectedId.value === s.id;
  const busyMs = s.status === 'busy' ? parseTime(s.busy_since) : 0;
  const ctx = s.usage?.context_percent;
  const act = activity(s);
  const needs = s.status === 'needs-input';
  return (
    <li class={`row-wrap${isSel ? ' selected' : ''}`}>
      <div class="row-box">
        <a
          class={`row status-${s.status}${s.error ? ' has-error' : ''}`}
          href={`#/s/${encodeURIComponent(s.id)}`}
          data-testid="session-row"
          data-session-id={s.id}
          data-status={s.status}
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
              <span class="row-meta">
                {busyMs > 0 && (
                  <span class="busy-time" data-testid="busy-time" title="Busy for">
                    {clock((now.value - busyMs) / 1000)}
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
            </span>
            {act && (
              <span class={`row-act${needs ? ' act-needs' : ''}${s.error ? ' act-error' : ''}`} title={act}>
                {act}
              </span>
            )}
          </span>
        </a>
        {needs && !isSel && (
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
      {needs && respond && !isSel && (
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
      <div class="sidebar-list">
        <SessionList />
      </div>
    </nav>
  );
}
