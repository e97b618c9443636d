import { useState } from 'preact/hooks';
import { api } from '../api';
import { toastError } from '../store';
import type { Option, Session } from '../types';
import { isObject, pretty, shortDir, str, toolSummary } from '../util';
import { DiffView, editsFromInput } from './Diff';

const GENERIC: Option[] = [
  { label: 'Yes', keys: ['1'] },
  { label: 'No', keys: ['Escape'] },
];

/** What Claude waits for, and the buttons that answer it. */
export function NeedsInputCard(props: { s: Session; compact?: boolean; testid?: string }) {
  const s = props.s;
  const w = s.waiting_for;
  const [busy, setBusy] = useState<string | null>(null);
  const options = w?.options && w.options.length > 0 ? w.options : GENERIC;
  // Its machine is away: nothing can be pressed until it is back.
  const off = !!s.offline;
  const press = (label: string, keys: string[]) => {
    if (busy || off) return;
    setBusy(label);
    api
      .keys(s.id, keys)
      .catch(toastError(`Sending ${label} failed`))
      .finally(() => setBusy(null));
  };
  let title = 'Claude needs your input';
  if (w?.kind === 'permission') title = w.tool ? `Allow ${w.tool}?` : 'Permission needed';
  else if (w?.kind === 'question') title = 'Claude asks';
  else if (w?.kind === 'elicitation') title = 'Input requested';
  return (
    <section
      class={`needs-card${props.compact ? ' compact' : ''}${off ? ' offline' : ''}`}
      data-testid={props.testid ?? 'needs-input-card'}
      data-session-id={s.id}
      data-offline={off ? 'true' : undefined}
      aria-label={`${s.name} needs input`}
      role="region"
    >
      <div class="needs-head">
        <span class="needs-badge">Needs you</span>
        <h3 class="needs-title">{title}</h3>
      </div>
      {off && (
        <p class="needs-offline" role="note">
          {s.device ? `${s.device} is offline` : 'The machine is offline'}: the answer can be given once it is back.
        </p>
      )}
      {w && <WaitingBody w={w} compact={!!props.compact} />}
      {w?.message && w.kind !== 'elicitation' && <p class="needs-msg">{w.message}</p>}
      <div class="needs-actions" role="group" aria-label="Answers">
        {options.map((o, i) => (
          <button
            key={i}
            type="button"
            class={`btn opt-btn${i === 0 ? ' btn-primary' : ''}`}
            aria-label={o.label}
            title={`Keys: ${o.keys.join(' ')}`}
            disabled={busy !== null || off}
            data-keys={o.keys.join(' ')}
            onClick={() => press(o.label, o.keys)}
          >
            {o.label}
          </button>
        ))}
        <button
          type="button"
          class="btn btn-ghost opt-btn"
          aria-label="Esc (cancel)"
          disabled={busy !== null || off}
          onClick={() => press('Esc (cancel)', ['Escape'])}
        >
          Esc (cancel)
        </button>
      </div>
    </section>
  );
}

function WaitingBody(props: { w: NonNullable<Session['waiting_for']>; compact: boolean }) {
  const w = props.w;
  const input = w.input;
  if (w.kind === 'question') {
    const qs = isObject(input) && Array.isArray(input['questions']) ? input['questions'].filter(isObject) : [];
    if (qs.length === 0) return null;
    return (
      <div class="questions">
        {qs.map((q, i) => {
          const opts = Array.isArray(q['options']) ? q['options'].filter(isObject) : [];
          return (
            <div class="question" key={i}>
              {str(q['header']) && <div class="q-header">{str(q['header'])}</div>}
              <div class="q-text">{str(q['question'])}</div>
              {opts.length > 0 && (
                <ol class="q-options">
                  {opts.map((o, j) => (
                    <li key={j}>
                      <span class="q-label">{str(o['label'])}</span>
                      {str(o['description']) && <span class="q-desc"> — {str(o['description'])}</span>}
                    </li>
                  ))}
                </ol>
              )}
              {!!q['multiSelect'] && <div class="muted small">Several answers allowed</div>}
            </div>
          );
        })}
      </div>
    );
  }
  if (w.kind === 'elicitation') {
    return <p class="needs-msg">{w.message || 'An MCP server asks for input.'}</p>;
  }
  const tool = w.tool || '';
  if (tool === 'Bash' && isObject(input)) {
    return (
      <div class="needs-tool">
        <pre class="code-block">
          <code>{str(input['command'])}</code>
        </pre>
        {str(input['description']) && <p class="muted small">{str(input['description'])}</p>}
      </div>
    );
  }
  const edits = editsFromInput(tool, input);
  if (edits.length > 0) {
    return (
      <div class="needs-tool">
        <div class="needs-path" title={edits[0]!.path}>
          {shortDir(edits[0]!.path)}
        </div>
        {props.compact ? null : edits.map((e, i) => <DiffView key={i} edit={e} showPath={false} />)}
      </div>
    );
  }
  if (input === undefined || input === null) return null;
  const summary = toolSummary(tool, input);
  return (
    <div class="needs-tool">
      {summary && (
        <pre class="code-block">
          <code>{summary}</code>
        </pre>
      )}
      {!props.compact && (
        <details class="raw">
          <summary>Full input</summary>
          <pre class="code-block">
            <code>{pretty(input)}</code>
          </pre>
        </details>
      )}
    </div>
  );
}
