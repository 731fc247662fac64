// A modal dialog on the native <dialog>: showModal() makes the rest of the page inert (focus stays inside),
// Escape closes it through onClose, and focus goes back to whatever opened it. The body and footer mount once the
// dialog is open, so that a control marked autoFocus in them gets the focus (React focuses it as it mounts, which
// does nothing inside a dialog not open yet).
import { useId, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { Icon } from './Icon';

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex="-1"])';

interface DialogProps {
  title: string;
  description?: ReactNode;
  onClose(): void;
  children: ReactNode;
  /** Buttons, right-aligned at the foot. */
  footer?: ReactNode;
  size?: 'small' | 'medium' | 'large';
  /** While true (a request in flight) Escape and the close button do nothing. */
  busy?: boolean;
  className?: string;
}

export function Dialog({ title, description, onClose, children, footer, size = 'medium', busy = false, className }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descriptionId = useId();
  const state = useRef({ onClose, busy });
  state.current = { onClose, busy };
  const [open, setOpen] = useState(false);

  useLayoutEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    dialog.showModal();
    setOpen(true);
    const onCancel = (event: Event) => {
      event.preventDefault();
      if (!state.current.busy) state.current.onClose();
    };
    dialog.addEventListener('cancel', onCancel);
    return () => {
      dialog.removeEventListener('cancel', onCancel);
      if (dialog.open) dialog.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);

  // A press that starts and ends on the backdrop closes the dialog; a drag out of a text field does not.
  const pressedBackdrop = useRef(false);
  return (
    <dialog
      ref={ref}
      className={`dialog dialog-${size}${className ? ` ${className}` : ''}`}
      aria-labelledby={titleId}
      aria-describedby={description ? descriptionId : undefined}
      onKeyDown={(event) => {
        // The page behind is inert already; Tab also wraps inside the dialog instead of leaving for the browser's own UI.
        if (event.key !== 'Tab') return;
        const focusable = [...event.currentTarget.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.offsetParent !== null || el === document.activeElement);
        const first = focusable[0];
        const last = focusable[focusable.length - 1];
        if (!first || !last) return;
        if (event.shiftKey && document.activeElement === first) {
          event.preventDefault();
          last.focus();
        } else if (!event.shiftKey && document.activeElement === last) {
          event.preventDefault();
          first.focus();
        }
      }}
      onMouseDown={(event) => { pressedBackdrop.current = event.target === event.currentTarget; }}
      onClick={(event) => {
        if (pressedBackdrop.current && event.target === event.currentTarget && !busy) onClose();
        pressedBackdrop.current = false;
      }}
    >
      <div className="dialog-box">
        <header className="dialog-header">
          <div>
            <h2 id={titleId} className="dialog-title">{title}</h2>
            {description && <div id={descriptionId} className="dialog-description">{description}</div>}
          </div>
          <button type="button" className="icon-button" onClick={onClose} disabled={busy} aria-label="Close">
            <Icon name="x" size={18} />
          </button>
        </header>
        {open && <div className="dialog-body">{children}</div>}
        {open && footer && <footer className="dialog-footer">{footer}</footer>}
      </div>
    </dialog>
  );
}
