// Short confirmations ("Key revoked"), read out by screen readers through a polite live region. A toast may carry
// one action (Undo), and then stays for as long as the action can be taken.
import { createContext, useCallback, useContext, useMemo, useRef, useState, type ReactNode } from 'react';
import { Icon } from './Icon';

type Tone = 'success' | 'error' | 'info';
export interface ToastAction {
  label: string;
  onClick(): void;
}
interface ToastOptions {
  action?: ToastAction;
  /** How long the toast stays; by default 4.5 s, or 8 s for an error. */
  durationMs?: number;
}
interface Toast { id: number; message: string; tone: Tone; action?: ToastAction }

const ToastContext = createContext<(message: string, tone?: Tone, options?: ToastOptions) => void>(() => {});

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const next = useRef(1);
  const dismiss = useCallback((id: number) => setToasts((list) => list.filter((t) => t.id !== id)), []);
  const show = useCallback((message: string, tone: Tone = 'success', options: ToastOptions = {}) => {
    const id = next.current++;
    // A toast with an action is kept when others push the oldest out: its Undo must stay in reach for its time.
    setToasts((list) => {
      const added: Toast = { id, message, tone, ...(options.action ? { action: options.action } : {}) };
      return [...list.filter((t) => !t.action).slice(-2), ...list.filter((t) => t.action), added].sort((a, b) => a.id - b.id);
    });
    window.setTimeout(() => dismiss(id), options.durationMs ?? (tone === 'error' ? 8000 : 4500));
  }, [dismiss]);
  const value = useMemo(() => show, [show]);
  return (
    <ToastContext.Provider value={value}>
      {children}
      <div className="toasts" role="status" aria-live="polite">
        {toasts.map((toast) => (
          <div key={toast.id} className={`toast toast-${toast.tone}`}>
            <Icon name={toast.tone === 'error' ? 'alert' : toast.tone === 'info' ? 'info' : 'check'} />
            <span>{toast.message}</span>
            {toast.action && (
              <button
                type="button"
                className="toast-action"
                onClick={() => { dismiss(toast.id); toast.action!.onClick(); }}
              >
                {toast.action.label}
              </button>
            )}
            <button type="button" className="icon-button" onClick={() => dismiss(toast.id)} aria-label="Dismiss">
              <Icon name="x" size={14} />
            </button>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export function useToast() {
  return useContext(ToastContext);
}
