import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, errorText } from '../api';
import {
  CURRENT_SUBMIT,
  CURRENT_UNKNOWN,
  currentIndex,
  dialogSummary,
  feedbackOption,
  isMultiSelect,
  optionDescription,
  questionsOf,
} from '../dialog';
import { renderMarkdown } from '../markdown';
import { toastError } from '../store';
import type { AnswerRequest, Option, Question, Session, Waiting } from '../types';
import { isObject, pretty, shortDir, str, toolSummary } from '../util';
import { DiffView, editsFromInput } from './Diff';

/** A refused answer, shown in the card until the next one. */
interface AnswerError {
  code: string;
  message: string;
  /** The dialog the answer named. */
  dialog: string;
}

// A key press right after the card took the focus was meant for whatever had
// it before (a prompt being typed, say): Enter must not pick "Yes".
const FOCUS_GUARD_MS = 700;

/**
 * What Claude waits for, and the controls that answer it: one per option as
 * drawn on the screen (buttons; toggles and a Submit for a multi-select; a
 * text field for an option that takes text). Every answer names its dialog.
 */
export function NeedsInputCard(props: {
  s: Session;
  compact?: boolean;
  testid?: string;
  /** Move the focus to the first option when a dialog appears (desktop, the session being viewed). */
  autoFocus?: boolean;
  /** The prompt box is this dialog's text answer (a permission's "No, and tell Claude…"): the card points there. */
  promptBoxAnswers?: boolean;
}) {
  const s = props.s;
  const w = s.waiting_for ?? null;
  const [busy, setBusy] = useState<string | null>(null);
  const [err, setErr] = useState<AnswerError | null>(null);
  const card = useRef<HTMLElement>(null);
  const focusedFor = useRef('');
  const focusedAt = useRef(0);
  const dialog = w?.dialog_id ?? '';
  // Its machine is away: nothing can be pressed until it is back.
  const off = !!s.offline;
  const ready = !!dialog && !off;

  useEffect(() => {
    if (!props.autoFocus || !ready || focusedFor.current === dialog) return;
    focusedFor.current = dialog;
    // Not while the person types elsewhere: try once more when they pause.
    const tryFocus = (again: boolean) => {
      const el = card.current;
      if (!el || focusedFor.current !== dialog) return;
      if (typingElsewhere(el)) {
        if (again) timer = window.setTimeout(() => tryFocus(false), TYPING_MS);
        return;
      }
      const first = el.querySelector<HTMLElement>('[data-answer]:not([disabled])');
      if (!first) return;
      first.focus();
      focusedAt.current = Date.now();
    };
    let timer = 0;
    tryFocus(true);
    return () => clearTimeout(timer);
  }, [dialog, ready, props.autoFocus]);

  const send = (req: Omit<AnswerRequest, 'dialog'>, what: string, done?: () => void) => {
    if (busy || !ready) return;
    setBusy(what);
    setErr(null);
    const asked = dialog;
    api
      .answer(s.id, { dialog: asked, ...req })
      .then(() => done?.())
      .catch((e) => {
        if (e instanceof ApiError) setErr({ code: e.code, message: errorText(e), dialog: asked });
        else setErr({ code: 'network', message: errorText(e), dialog: asked });
      })
      .finally(() => setBusy(null));
  };
  /** A click made by a key right after the card took the focus is ignored. */
  const guard = (e: MouseEvent) => e.detail === 0 && Date.now() - focusedAt.current < FOCUS_GUARD_MS;

  // Esc names the dialog too once it is read (the agent presses Escape only
  // where the dialog offers it); before, it is the raw key.
  const sendEscape = () => {
    if (busy || off) return;
    if (dialog) {
      send({ cancel: true }, 'Esc');
      return;
    }
    setBusy('Esc');
    api
      .keys(s.id, ['Escape'])
      .catch(toastError('Sending Esc failed'))
      .finally(() => setBusy(null));
  };
  const title = dialogSummary(w);
  const kind = w?.kind ?? '';
  return (
    <section
      ref={card}
      class={`needs-card${props.compact ? ' compact' : ''}${off ? ' offline' : ''}`}
      data-testid={props.testid ?? 'needs-input-card'}
      data-session-id={s.id}
      data-kind={kind || undefined}
      data-dialog-id={dialog || undefined}
      data-offline={off ? 'true' : undefined}
      aria-label={`${s.name} needs input: ${title}`}
      role="region"
    >
      <div class="needs-head">
        <span class="needs-badge">{KIND_BADGE[kind] ?? 'Needs you'}</span>
        <h3 class="needs-title" data-testid="needs-title">
          {title}
        </h3>
      </div>
      {off && (
        <p class="needs-offline" role="note">
          {s.device ? `${s.device} is offline` : 'The machine is offline'}: the answer can be given once it is back.
        </p>
      )}
      {w && <WaitingBody w={w} compact={!!props.compact} />}
      {err && <AnswerErrorNote err={err} dialog={dialog} />}
      {!dialog && !off && (
        <p class="muted small needs-reading" role="status">
          Reading the dialog…
        </p>
      )}
      {w && (
        <Answers
          w={w}
          compact={!!props.compact}
          ready={ready}
          busy={busy}
          send={send}
          guard={guard}
          promptBoxAnswers={!!props.promptBoxAnswers}
        />
      )}
      <div class="needs-actions needs-esc">
        <button
          type="button"
          class="btn btn-ghost opt-btn"
          title={kind === 'trust' ? 'Press Esc: Claude exits without trusting the folder' : 'Press Esc: Claude cancels the dialog'}
          disabled={busy !== null || off}
          data-testid="dialog-esc"
          onClick={sendEscape}
        >
          {busy === 'Esc' ? 'Esc …' : kind === 'trust' ? 'Esc (exit Claude)' : 'Esc (cancel)'}
        </button>
      </div>
    </section>
  );
}

const KIND_BADGE: Record<string, string> = {
  permission: 'Permission',
  question: 'Question',
  plan: 'Plan',
  trust: 'Trust',
  api_key: 'API key',
  elicitation: 'MCP',
  bypass_permissions: 'Warning',
  mcp_server: 'MCP server',
  settings_error: 'Settings',
  choice: 'Choice',
};

function isTextEntry(t: EventTarget | null): boolean {
  if (!(t instanceof HTMLElement)) return false;
  if (t.isContentEditable || t.closest('.xterm')) return true;
  if (t instanceof HTMLTextAreaElement) return true;
  if (t instanceof HTMLInputElement) return !['button', 'checkbox', 'radio', 'submit', 'reset'].includes(t.type);
  return false;
}

// When the person last pressed a key in a text field. A prompt box that a
// dialog disabled drops the focus to the page; keys typed on would land on
// the card's first option, and Enter or Space there would answer.
let lastTextKey = 0;
/** Track typing in text fields (called once, from main.tsx). */
export function startTypingTracker(): void {
  window.addEventListener(
    'keydown',
    (e) => {
      if (isTextEntry(e.target)) lastTextKey = Date.now();
    },
    true,
  );
}
const TYPING_MS = 3000;

/** Whether the person is typing in a text field (or the terminal) outside the card, or was a moment ago. */
function typingElsewhere(card: HTMLElement): boolean {
  if (Date.now() - lastTextKey < TYPING_MS) return true;
  const a = document.activeElement;
  if (!(a instanceof HTMLElement) || a === document.body || card.contains(a)) return false;
  if (!isTextEntry(a)) return false;
  return !(a instanceof HTMLTextAreaElement || a instanceof HTMLInputElement) || !a.disabled;
}

function AnswerErrorNote(props: { err: AnswerError; dialog: string }) {
  const { err, dialog } = props;
  if (err.code === 'stale_dialog') {
    return (
      <p class="needs-error" role="alert" data-testid="answer-error" data-code={err.code}>
        The dialog changed before the answer reached it, so nothing was pressed.{' '}
        {dialog && dialog !== err.dialog ? 'This is the dialog on the screen now.' : 'Reading the screen again…'}
      </p>
    );
  }
  return (
    <p class="needs-error" role="alert" data-testid="answer-error" data-code={err.code}>
      {err.message}
    </p>
  );
}

type Send = (req: Omit<AnswerRequest, 'dialog'>, what: string, done?: () => void) => void;

/** The options as drawn: buttons, or toggles with a Submit; text fields for options that take text. */
function Answers(props: {
  w: Waiting;
  compact: boolean;
  ready: boolean;
  busy: string | null;
  send: Send;
  guard: (e: MouseEvent) => boolean;
  promptBoxAnswers: boolean;
}) {
  const { w, ready, busy, send, guard } = props;
  const options = w.options ?? [];
  const dialog = w.dialog_id ?? '';
  const multi = isMultiSelect(w);
  // Toggles start as drawn and follow the screen when the dialog changes.
  const [checked, setChecked] = useState<Set<number>>(() => drawnChecked(options));
  useEffect(() => setChecked(drawnChecked(options)), [dialog]);
  // Text typed for an option stays when the dialog changes (a refused answer keeps it).
  // Keyed by the question too: "Type something." of one question is not another's.
  const [texts, setTexts] = useState<Record<string, string>>({});
  const key = (o: Option) => `${w.kind}|${currentIndex(w)}|${o.label}`;
  const textOf = (o: Option) => texts[key(o)] ?? '';
  const setText = (o: Option, v: string) => setTexts((t) => ({ ...t, [key(o)]: v }));
  const clearText = (o: Option) =>
    setTexts((t) => {
      const n = { ...t };
      delete n[key(o)];
      return n;
    });
  const disabled = !ready || busy !== null;

  /** An option that answers at once. */
  const button = (o: Option, primary: boolean) => {
    const desc = optionDescription(w, o);
    const descId = desc ? `opt-desc-${dialog}-${o.number}` : undefined;
    return (
      <button
        key={o.number}
        type="button"
        class={`btn opt-btn${primary ? ' btn-primary' : ''}${desc ? ' has-desc' : ''}`}
        aria-label={o.label}
        aria-describedby={descId}
        disabled={disabled}
        data-option={o.number}
        data-answer
        onClick={(e) => !guard(e) && send({ option: o.number }, o.label)}
      >
        <span class="opt-label">
          {o.number}. {o.label}
          {busy === o.label ? ' …' : ''}
        </span>
        {desc && (
          <span class="opt-desc" id={descId}>
            {desc}
          </span>
        )}
      </button>
    );
  };

  if (options.length === 0) {
    return ready ? <p class="muted small">No options could be read off the screen: answer in the terminal.</p> : null;
  }

  if (multi) {
    // The toggles are the options with a state; without any, all but the
    // text ones. The rest ("Chat about this") answer at once.
    const stated = options.some((o) => o.checked !== undefined && o.checked !== null);
    const isToggle = (o: Option) => !o.text && (stated ? o.checked !== undefined && o.checked !== null : true);
    const toggles = options.filter(isToggle);
    const textOpts = options.filter((o) => o.text);
    const others = options.filter((o) => !o.text && !isToggle(o));
    const submit = () => {
      const chosen = toggles.filter((o) => checked.has(o.number)).map((o) => o.number);
      const typed = textOpts.find((o) => textOf(o).trim());
      const req: Omit<AnswerRequest, 'dialog'> = { options: typed ? [...chosen, typed.number] : chosen };
      if (typed) req.text = textOf(typed).trim();
      send(req, 'Submit', () => typed && clearText(typed));
    };
    const none = checked.size === 0 && !textOpts.some((o) => textOf(o).trim());
    return (
      <div class="needs-options needs-multi" role="group" aria-label="Choose any">
        {toggles.map((o) => {
          const desc = optionDescription(w, o);
          const on = checked.has(o.number);
          return (
            <label key={o.number} class={`opt-check${on ? ' on' : ''}`} data-option={o.number}>
              <input
                type="checkbox"
                checked={on}
                disabled={disabled}
                data-answer
                aria-describedby={desc ? `opt-desc-${dialog}-${o.number}` : undefined}
                onChange={(e) => {
                  const v = (e.target as HTMLInputElement).checked;
                  setChecked((c) => {
                    const n = new Set(c);
                    if (v) n.add(o.number);
                    else n.delete(o.number);
                    return n;
                  });
                }}
              />
              <span class="opt-main">
                <span class="opt-label">
                  {o.number}. {o.label}
                </span>
                {desc && (
                  <span class="opt-desc" id={`opt-desc-${dialog}-${o.number}`}>
                    {desc}
                  </span>
                )}
              </span>
            </label>
          );
        })}
        {textOpts.map((o) => (
          <TextOption key={o.number} o={o} w={w} value={textOf(o)} onInput={(v) => setText(o, v)} disabled={disabled} />
        ))}
        <div class="needs-actions">
          <button
            type="button"
            class="btn btn-primary opt-btn"
            data-testid="multi-submit"
            disabled={disabled || none}
            title={none ? 'Choose at least one' : undefined}
            onClick={(e) => !guard(e) && submit()}
          >
            {busy === 'Submit' ? 'Submitting…' : 'Submit'}
          </button>
          {others.map((o) => button(o, false))}
        </div>
      </div>
    );
  }

  const textField = (o: Option, label?: string) => (
    <TextOption
      key={`text-${o.number}`}
      o={o}
      w={w}
      label={label}
      value={textOf(o)}
      onInput={(v) => setText(o, v)}
      disabled={disabled}
      onSubmit={(t) => send({ option: o.number, text: t }, o.label, () => clearText(o))}
      sending={busy === o.label}
    />
  );

  if (w.kind === 'elicitation' && (w.fields ?? []).length > 0) {
    return <ElicitationForm key={dialog} w={w} disabled={disabled} busy={busy} send={send} guard={guard} />;
  }

  if (w.kind === 'permission') {
    // Every option answers as it is; the No that takes text ("No, and tell
    // Claude what to do differently") also takes it: from the prompt box
    // when it is in view, else from a field here.
    const fb = feedbackOption(w);
    return (
      <div class="needs-options" role="group" aria-label="Answers">
        {options.map((o, i) => button(o, i === 0))}
        {fb &&
          (props.promptBoxAnswers && !props.compact ? <PromptBoxPointer o={fb} /> : textField(fb, 'Or tell Claude what to do instead'))}
      </div>
    );
  }

  return (
    <div class="needs-options" role="group" aria-label="Answers">
      {options.map((o, i) => (o.text ? textField(o) : button(o, i === 0)))}
    </div>
  );
}

/**
 * An MCP server's form: its fields as drawn, then its buttons. Accept
 * (the first) sends the fields; the others answer as they are.
 */
function ElicitationForm(props: { w: Waiting; disabled: boolean; busy: string | null; send: Send; guard: (e: MouseEvent) => boolean }) {
  const { w, disabled, send, guard } = props;
  const fields = w.fields ?? [];
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(fields.map((f) => [f.name, f.value ?? ''])));
  const set = (name: string, v: string) => setValues((x) => ({ ...x, [name]: v }));
  const options = w.options ?? [];
  const accept = options.find((o) => /^accept/i.test(o.label)) ?? options[0];
  return (
    <form
      class="needs-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (accept) send({ option: accept.number, fields: filled(values) }, accept.label);
      }}
    >
      {fields.map((f) => {
        const id = `field-${w.dialog_id ?? ''}-${f.name}`;
        const v = values[f.name] ?? '';
        return (
          <div class="form-field" key={f.name} data-field={f.name}>
            <label for={id} class="opt-label">
              {f.name}
              {f.missing ? ' *' : ''}
            </label>
            {f.kind === 'boolean' ? (
              <input
                id={id}
                type="checkbox"
                checked={v === 'true'}
                disabled={disabled}
                data-answer
                onChange={(e) => set(f.name, (e.target as HTMLInputElement).checked ? 'true' : 'false')}
              />
            ) : f.kind === 'choice' && f.choices && f.choices.length > 0 ? (
              <select
                id={id}
                class="input"
                value={v}
                disabled={disabled}
                data-answer
                onChange={(e) => set(f.name, (e.target as HTMLSelectElement).value)}
              >
                <option value="">(not set)</option>
                {f.choices.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                class="input"
                type="text"
                value={v}
                maxLength={4000}
                disabled={disabled}
                data-answer
                onInput={(e) => set(f.name, (e.target as HTMLInputElement).value)}
              />
            )}
            {f.description && <span class="opt-desc">{f.description}</span>}
          </div>
        );
      })}
      <div class="needs-options">
        {options.map((o) =>
          o === accept ? (
            <button
              key={o.number}
              type="submit"
              class="btn btn-primary opt-btn"
              data-option={o.number}
              disabled={disabled}
              aria-label={o.label}
            >
              {o.label}
            </button>
          ) : (
            <button
              key={o.number}
              type="button"
              class="btn opt-btn"
              data-option={o.number}
              aria-label={o.label}
              disabled={disabled}
              onClick={(e) => !guard(e) && send({ option: o.number }, o.label)}
            >
              {o.label}
            </button>
          ),
        )}
      </div>
    </form>
  );
}

/** The fields the person set: an empty one stays as the form has it. */
function filled(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
}

function drawnChecked(options: Option[]): Set<number> {
  return new Set(options.filter((o) => o.checked).map((o) => o.number));
}

/** An option that takes text ("Type something", "No, and tell Claude…"): a field and a Send. */
function TextOption(props: {
  o: Option;
  w: Waiting;
  /** Shown instead of the option's own label. */
  label?: string;
  value: string;
  onInput: (v: string) => void;
  disabled: boolean;
  /** Answer with this option and the text; absent in a multi-select (its Submit sends it). */
  onSubmit?: (text: string) => void;
  sending?: boolean;
}) {
  const { o, w } = props;
  const id = `opt-text-${w.dialog_id ?? ''}-${o.number}`;
  const desc = optionDescription(w, o);
  const submit = () => {
    const t = props.value.trim();
    if (t && props.onSubmit && !props.disabled) props.onSubmit(t);
  };
  return (
    <form
      class="opt-text"
      data-option={o.number}
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <label for={id} class="opt-label">
        {props.label ?? `${o.number}. ${o.label}`}
      </label>
      {desc && <span class="opt-desc">{desc}</span>}
      <div class="opt-text-row">
        <input
          id={id}
          class="input"
          type="text"
          value={props.value}
          maxLength={4000}
          disabled={props.disabled}
          data-answer
          data-testid="option-text"
          placeholder={`${o.label.replace(/\.$/, '')}…`}
          onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
        />
        {props.onSubmit && (
          <button
            type="submit"
            class="btn btn-primary"
            aria-label={`Send: ${props.label ?? o.label}`}
            disabled={props.disabled || !props.value.trim()}
          >
            {props.sending ? '…' : 'Send'}
          </button>
        )}
      </div>
    </form>
  );
}

/** A permission's text answer is the prompt box: this goes there. */
function PromptBoxPointer(props: { o: Option }) {
  return (
    <p class="needs-hint small">
      Or{' '}
      <button
        type="button"
        class="link-btn"
        data-testid="to-prompt-box"
        onClick={() =>
          requestAnimationFrame(() => document.querySelector<HTMLTextAreaElement>('textarea[data-testid="prompt-box"]')?.focus())
        }
      >
        tell Claude what to do instead
      </button>{' '}
      in the box below (it answers {props.o.number}. {props.o.label}).
    </p>
  );
}

function WaitingBody(props: { w: Waiting; compact: boolean }) {
  const w = props.w;
  switch (w.kind) {
    case 'question':
      return <QuestionsBody w={w} compact={props.compact} />;
    case 'plan':
      return <PlanBody w={w} compact={props.compact} />;
    case 'permission':
      return (
        <>
          <ToolBody w={w} compact={props.compact} />
          {w.question && <p class="needs-q">{w.question}</p>}
        </>
      );
    case 'elicitation':
      return (
        <>
          <p class="needs-msg">{w.message || w.question || 'An MCP server asks for input.'}</p>
          {w.body && <div class="needs-body pre-wrap">{w.body}</div>}
        </>
      );
  }
  // trust, api_key, choice and kinds newer than this page: the dialog's words as drawn.
  return <DialogText w={w} compact={props.compact} />;
}

/** The dialog's own words (title, body, question), minus what the title already says. */
function DialogText(props: { w: Waiting; compact: boolean }) {
  const w = props.w;
  const summary = dialogSummary(w);
  const seen = new Set([summary.trim()]);
  const parts: { cls: string; text: string }[] = [];
  for (const [cls, text] of [
    ['needs-dtitle', w.title],
    ['needs-body pre-wrap', w.body],
    ['needs-q', w.question],
    ['needs-msg', w.message],
  ] as const) {
    const t = (text ?? '').trim();
    if (!t || seen.has(t)) continue;
    seen.add(t);
    parts.push({ cls, text: t });
  }
  if (parts.length === 0) return null;
  return (
    <div class={`needs-text${props.compact ? ' clip' : ''}`}>
      {parts.map((p, i) => (
        <div key={i} class={p.cls}>
          {p.text}
        </div>
      ))}
    </div>
  );
}

/** AskUserQuestion: every question with its header; the one on the screen now is marked. */
function QuestionsBody(props: { w: Waiting; compact: boolean }) {
  const w = props.w;
  const qs = questionsOf(w);
  const cur = currentIndex(w);
  const answering = (w.options ?? []).length > 0;
  if (qs.length === 0) return <DialogText w={w} compact={props.compact} />;
  return (
    <div class="questions">
      {qs.length > 1 && (
        <ol class="q-steps" aria-label="Questions">
          {qs.map((q, i) => (
            <li
              key={i}
              class={`q-step${i === cur ? ' current' : ''}${cur === CURRENT_SUBMIT || (cur >= 0 && i < cur) ? ' done' : ''}`}
              aria-current={i === cur ? 'step' : undefined}
              title={q.question}
            >
              {q.header || `Question ${i + 1}`}
            </li>
          ))}
          <li class={`q-step${cur === CURRENT_SUBMIT ? ' current' : ''}`} aria-current={cur === CURRENT_SUBMIT ? 'step' : undefined}>
            Submit
          </li>
        </ol>
      )}
      {cur === CURRENT_SUBMIT ? (
        <div class="question current" data-testid="question-submit">
          <div class="q-text">Review your answers, then submit them.</div>
          {w.body && <div class="needs-body pre-wrap">{w.body}</div>}
        </div>
      ) : cur === CURRENT_UNKNOWN ? (
        <div class="question current">
          <div class="q-text">{w.question || 'The question on the screen'}</div>
        </div>
      ) : (
        // The question on the screen now, right above its options; the
        // steps name the others.
        qs[cur] && <QuestionBlock q={qs[cur]!} showOptions={!answering} showText={qs.length > 1} />
      )}
    </div>
  );
}

function QuestionBlock(props: { q: Question; showOptions: boolean; showText: boolean }) {
  const q = props.q;
  return (
    <div class="question current" data-current="true">
      <div class="q-head">
        {q.header && <span class="q-header">{q.header}</span>}
        {q.multi_select && <span class="q-multi">choose any</span>}
      </div>
      {/* One question: the card's title already asks it. */}
      {props.showText && <div class="q-text">{q.question}</div>}
      {props.showOptions && (q.options ?? []).length > 0 && (
        <ol class="q-options">
          {(q.options ?? []).map((o, j) => (
            <li key={j}>
              <span class="q-label">{o.label}</span>
              {o.description && <span class="q-desc"> — {o.description}</span>}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/** ExitPlanMode: the plan, rendered as the timeline renders Claude's text. */
function PlanBody(props: { w: Waiting; compact: boolean }) {
  const w = props.w;
  const plan = w.plan || (isObject(w.input) ? str(w.input['plan']) : '');
  if (!plan) return <DialogText w={w} compact={props.compact} />;
  const html = <div class="md needs-plan" data-testid="plan" dangerouslySetInnerHTML={{ __html: renderMarkdown(plan) }} />;
  if (props.compact) {
    return (
      <details class="raw">
        <summary>The plan</summary>
        {html}
      </details>
    );
  }
  return html;
}

/** A permission: the tool and its input (the command, the diff). */
function ToolBody(props: { w: Waiting; compact: boolean }) {
  const w = props.w;
  const input = w.input;
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
  if (input === undefined || input === null) {
    // The tool is not known yet (the screen came first): what the screen drew.
    return w.body ? <div class="needs-body pre-wrap">{w.body}</div> : null;
  }
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
