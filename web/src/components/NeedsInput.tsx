import { useState } from 'preact/hooks';
import { api } from '../api';
import { toastError } from '../store';
import type { Option, Session } from '../types';
import { isObject, pretty, shortDir, str, toolSummary } from '../util';
import { DiffView, editsFromInput } from './Diff';

/** What Claude waits for, and the buttons that answer it. */
export function NeedsInputCard(props: { s: Session; compact?: boolean; testid?: string }) {
  const s = props.s;
  const w = s.waiting_for;
  const [busy, setBusy] = useState<string | null>(null);
  const options: Option[] = w?.options ?? [];
  const dialog = w?.dialog_id ?? '';
  // Its machine is away: nothing can be pressed until it is back.
  const off = !!s.offline;
  // Every answer names the dialog it was meant for: if the screen moved on,
  // the agent refuses it (stale_dialog) and nothing is pressed.
  const answer = (o: Option) => {
    if (busy || off || !dialog) return;
    setBusy(o.label);
    api
      .answer(s.id, { dialog, option: o.number })
      .catch(toastError(`Answering ${o.label} failed`))
      .finally(() => setBusy(null));
  };
  const escape = () => {
    if (busy || off) return;
    setBusy('Esc');
    api
      .keys(s.id, ['Escape'])
      .catch(toastError('Sending Esc failed'))
      .finally(() => setBusy(null));
  };
  const title = w?.summary || 'Claude needs your input';
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
        {!dialog && !off && <p class="muted small">Reading the dialog off the screen…</p>}
        {options.map((o, i) => (
          <button
            key={o.number}
            type="button"
            class={`btn opt-btn${i === 0 ? ' btn-primary' : ''}`}
            aria-label={o.label}
            title={o.description || o.label}
            disabled={busy !== null || off || !dialog || !!o.text}
            data-option={o.number}
            onClick={() => answer(o)}
          >
            {o.number}. {o.label}
          </button>
        ))}
        <button
          type="button"
          class="btn btn-ghost opt-btn"
          aria-label="Esc (cancel)"
          disabled={busy !== null || off}
          onClick={escape}
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
