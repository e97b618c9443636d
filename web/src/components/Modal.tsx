import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { Icon } from './Icon';

/** A modal <dialog> (focus trap and Esc come with it). */
export function Modal(props: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  class?: string;
  testid?: string;
  footer?: ComponentChildren;
  /** Where it sits: a centered box, or a sheet from the right. */
  variant?: 'center' | 'sheet';
  initialFocus?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const onClose = useRef(props.onClose);
  onClose.current = props.onClose;
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (!d.open) {
      try {
        d.showModal();
      } catch {
        d.setAttribute('open', '');
      }
    }
    if (props.initialFocus) {
      const el = d.querySelector<HTMLElement>(props.initialFocus);
      el?.focus();
    }
    const prev = document.activeElement as HTMLElement | null;
    return () => {
      if (prev && document.contains(prev)) prev.focus();
    };
  }, []);
  const titleId = `dlg-${props.title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <dialog
      ref={ref}
      class={`modal modal-${props.variant ?? 'center'} ${props.class ?? ''}`}
      data-testid={props.testid}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        onClose.current();
      }}
      onClick={(e) => {
        // A click on the backdrop (the dialog element itself) closes.
        if (e.target === ref.current) onClose.current();
      }}
    >
      <div class="modal-box">
        <header class="modal-head">
          <h2 id={titleId}>{props.title}</h2>
          <button type="button" class="icon-btn" aria-label="Close" onClick={() => onClose.current()}>
            <Icon name="x" />
          </button>
        </header>
        <div class="modal-body">{props.children}</div>
        {props.footer && <footer class="modal-foot">{props.footer}</footer>}
      </div>
    </dialog>
  );
}
