// The quick switcher (Ctrl+K): type a few letters of a session's name,
// folder, branch or machine, Enter opens it.

import { useState } from 'preact/hooks';
import { openSession, sidebarOrder, switcherOpen } from '../store';
import type { Session } from '../types';
import { shortDir, urgency } from '../util';
import { Modal } from './Modal';
import { SessionDot } from './StatusDot';

const MAX_SHOWN = 50;

/** How well s matches q (higher is better; 0: not at all). */
function score(s: Session, q: string): number {
  if (!q) return 1;
  const name = (s.name || s.id).toLowerCase();
  if (name.startsWith(q)) return 4;
  if (name.includes(q)) return 3;
  if ((s.git?.branch ?? '').toLowerCase().includes(q)) return 2;
  if (s.dir.toLowerCase().includes(q) || (s.device ?? '').toLowerCase().includes(q)) return 1;
  return 0;
}

export function matches(list: Session[], query: string): Session[] {
  const q = query.trim().toLowerCase();
  return list
    .map((s, i) => ({ s, i, sc: score(s, q) }))
    .filter((x) => x.sc > 0)
    .sort((a, b) => b.sc - a.sc || urgency(b.s) - urgency(a.s) || a.i - b.i)
    .slice(0, MAX_SHOWN)
    .map((x) => x.s);
}

export function QuickSwitcher() {
  const [q, setQ] = useState('');
  const [cur, setCur] = useState(0);
  const list = matches(sidebarOrder.value, q);
  const i = Math.min(cur, Math.max(0, list.length - 1));
  const close = () => (switcherOpen.value = false);
  const pick = (s: Session | undefined) => {
    if (!s) return;
    close();
    openSession(s.id);
  };
  return (
    <Modal title="Go to a session" onClose={close} testid="quick-switcher" initialFocus="input" class="switcher">
      <input
        class="input"
        type="search"
        placeholder="Name, folder, branch or machine"
        aria-label="Find a session"
        aria-controls="switcher-list"
        value={q}
        data-testid="switcher-input"
        onInput={(e) => {
          setQ((e.target as HTMLInputElement).value.slice(0, 200));
          setCur(0);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') setCur(Math.min(i + 1, list.length - 1));
          else if (e.key === 'ArrowUp') setCur(Math.max(i - 1, 0));
          else if (e.key === 'Enter') pick(list[i]);
          else return;
          e.preventDefault();
        }}
      />
      {list.length === 0 && <p class="muted">No session matches.</p>}
      <ul class="switcher-list" id="switcher-list" aria-label="Sessions">
        {list.map((s, n) => (
          <li key={s.id}>
            <button
              type="button"
              class={`switcher-item${n === i ? ' current' : ''}`}
              aria-current={n === i ? 'true' : undefined}
              data-testid="switcher-item"
              data-session-id={s.id}
              onClick={() => pick(s)}
              onMouseMove={() => n !== i && setCur(n)}
            >
              <SessionDot s={s} />
              <span class="switcher-name">{s.name || s.id}</span>
              <span class="switcher-where">
                {s.device ? `${s.device} · ` : ''}
                {shortDir(s.dir)}
                {s.git?.branch ? ` · ${s.git.branch}` : ''}
              </span>
            </button>
          </li>
        ))}
      </ul>
    </Modal>
  );
}
