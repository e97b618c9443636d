// What a session's open dialog means for the page: its words, the option
// that takes text, and what a refused send said. Pure functions, no state.

import type { Option, Question, Session, Waiting } from './types';
import { isObject, str, toolSummary } from './util';

/** Whether a dialog is open on the session's screen (text is refused then): every dialog is needs-input. */
export function hasDialog(s: Session): boolean {
  return s.status === 'needs-input';
}

/** What the dialog asks, in a few words: the server's summary, else a guess from its kind. */
export function dialogSummary(w: Waiting | null | undefined): string {
  if (!w) return 'Claude needs your input';
  if (w.summary) return w.summary;
  switch (w.kind) {
    case 'permission': {
      const sub = w.tool ? toolSummary(w.tool, w.input) : '';
      return w.tool ? `Allow ${w.tool}${sub ? ': ' + sub : ''}?` : 'Allow a tool?';
    }
    case 'question': {
      const q = currentQuestion(w);
      return q ? `Claude asks: ${q.question}` : 'Claude asks a question';
    }
    case 'plan':
      return "Claude's plan is ready: approve it?";
    case 'trust':
      return 'Trust the files in this folder?';
    case 'api_key':
      return 'Use this API key?';
    case 'elicitation':
      return w.message ? `An MCP server asks: ${w.message}` : 'An MCP server asks for input';
  }
  return w.question || w.title || w.message || 'A choice is open on the screen';
}

/**
 * A permission prompt's "No, and tell Claude what to do differently": its No
 * when that takes text (an option of its own, or No amended with Tab). The
 * prompt box answers it. A Yes that takes text is never this answer.
 */
export function feedbackOption(w: Waiting | null | undefined): Option | undefined {
  if (!w || w.kind !== 'permission') return undefined;
  return (w.options ?? []).find((o) => o.text && /^no\b/i.test(o.label.trim()));
}

/** What the feedback answer says: "No, and tell Claude what to do differently". */
export function feedbackLabel(o: Option): string {
  return /tell claude/i.test(o.label) ? o.label : `${o.label.replace(/[.,]\s*$/, '')}, and tell Claude what to do differently`;
}

/** AskUserQuestion's questions: from waiting_for, else from the tool's input. */
export function questionsOf(w: Waiting): Question[] {
  if (w.questions && w.questions.length > 0) return w.questions;
  const input = w.input;
  if (!isObject(input) || !Array.isArray(input['questions'])) return [];
  return input['questions'].filter(isObject).map((q) => ({
    header: str(q['header']) || undefined,
    question: str(q['question']),
    multi_select: !!q['multiSelect'],
    options: (Array.isArray(q['options']) ? q['options'] : [])
      .filter(isObject)
      .map((o) => ({ label: str(o['label']), description: str(o['description']) || undefined })),
  }));
}

/** The "Submit answers" step, and a question the screen does not say (Claude marks the current tab with a colour only). */
export const CURRENT_SUBMIT = -1;
export const CURRENT_UNKNOWN = -2;

/** The index of the question on the screen now, CURRENT_SUBMIT or CURRENT_UNKNOWN. */
export function currentIndex(w: Waiting): number {
  const qs = questionsOf(w);
  const c = w.current ?? 0;
  if (c === CURRENT_SUBMIT) return c;
  if (Number.isInteger(c) && c >= 0 && c < qs.length) return c;
  // Not said: the question whose words the screen shows, or the only one.
  const norm = (t: string) => t.replace(/\s+/g, ' ').trim().toLowerCase();
  const q = norm(w.question ?? '');
  const i = q ? qs.findIndex((x) => norm(x.question) === q) : -1;
  if (i >= 0) return i;
  return qs.length === 1 ? 0 : CURRENT_UNKNOWN;
}

export function currentQuestion(w: Waiting): Question | undefined {
  const qs = questionsOf(w);
  const c = currentIndex(w);
  return c >= 0 ? qs[c] : undefined;
}

/** Whether the dialog's options are toggles, answered together. */
export function isMultiSelect(w: Waiting): boolean {
  if (w.multi_select) return true;
  return (w.options ?? []).some((o) => o.checked !== undefined && o.checked !== null);
}

/** An option's description: as drawn, else the tool call's for the same label. */
export function optionDescription(w: Waiting, o: Option): string {
  if (o.description) return o.description;
  const q = w.kind === 'question' ? currentQuestion(w) : undefined;
  const norm = (l: string) => l.trim().replace(/\.$/, '').toLowerCase();
  const m = q?.options?.find((x) => norm(x.label) === norm(o.label));
  return m?.description ?? '';
}

/**
 * The draft that a draft_present refusal names. The agent quotes it in its
 * message with Go's %q ("... holds text typed elsewhere (\"n\"); ...").
 */
export function draftFromMessage(msg: string): string {
  const m = /\(("(?:[^"\\]|\\.)*")\)/.exec(msg);
  if (!m || !m[1]) return '';
  try {
    const v: unknown = JSON.parse(m[1]);
    return typeof v === 'string' ? v : '';
  } catch {
    return m[1].slice(1, -1);
  }
}
