// Who is signed in. The Session comes from GET /ui/api/start when the UI opens, from sign-in or first-run setup, and
// goes away on sign-out or as soon as any request answers 401. Its csrfToken is handed to the API client.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, onUnauthorized, setCsrfToken } from '../api/client';
import type { Session } from '../api/types';

export type SessionState =
  | { status: 'loading' }
  | { status: 'error'; error: unknown }
  | { status: 'setup' }
  | { status: 'signed-out'; expired: boolean }
  | { status: 'signed-in'; session: Session };

interface SessionValue {
  state: SessionState;
  /** The session, when signed in. */
  session: Session | null;
  signedIn(session: Session): void;
  signOut(): Promise<void>;
  retry(): void;
}

const SessionContext = createContext<SessionValue | null>(null);

async function loadSession(): Promise<SessionState> {
  // One request, answered 200 signed in or not: a signed-out visit logs no failed request in the console.
  const { body } = await api.get('/ui/api/start');
  if (body.session) return { status: 'signed-in', session: body.session };
  return body.setupNeeded ? { status: 'setup' } : { status: 'signed-out', expired: false };
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let live = true;
    loadSession()
      .then((next) => { if (live) setState(next); })
      .catch((error: unknown) => { if (live) setState({ status: 'error', error }); });
    return () => { live = false; };
  }, [attempt]);

  useEffect(() => {
    setCsrfToken(state.status === 'signed-in' ? state.session.csrfToken : null);
  }, [state]);

  useEffect(() => onUnauthorized(() => {
    setState((current) => (current.status === 'signed-in' ? { status: 'signed-out', expired: true } : current));
  }), []);

  const signedIn = useCallback((session: Session) => {
    setCsrfToken(session.csrfToken);
    setState({ status: 'signed-in', session });
  }, []);

  const signOut = useCallback(async () => {
    try {
      await api.delete('/ui/api/session', { quietUnauthorized: true });
    } finally {
      setCsrfToken(null);
      setState({ status: 'signed-out', expired: false });
    }
  }, []);

  const value = useMemo<SessionValue>(() => ({
    state,
    session: state.status === 'signed-in' ? state.session : null,
    signedIn,
    signOut,
    retry: () => { setState({ status: 'loading' }); setAttempt((n) => n + 1); },
  }), [state, signedIn, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}

/** The signed-in session; pages inside the app shell are only rendered with one. */
export function useSignedIn(): Session {
  const { session } = useSession();
  if (!session) throw new Error('useSignedIn without a session');
  return session;
}
