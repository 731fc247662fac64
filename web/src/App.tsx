// The app once it knows who is here: the router (web/src/routes.tsx), whose guards read the session; opening, or a
// failure to ask, shows before any page.
import { RouterProvider } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { AuthLayout } from './components/Layout';
import { ErrorAlert, LoadingBlock } from './components/ui';
import { useSession } from './lib/session';
import { createAppRouter, type RouterContext } from './routes';

export function App() {
  const { state, retry } = useSession();
  if (state.status === 'loading') return <div className="boot"><LoadingBlock label="Opening leadrun" /></div>;
  if (state.status === 'error') {
    return <AuthLayout><div className="auth-card"><ErrorAlert error={state.error} retry={retry} /></div></AuthLayout>;
  }
  return <Routes session={state} />;
}

function Routes({ session }: RouterContext) {
  const [router] = useState(() => createAppRouter(session));
  const seen = useRef(session);
  // Signing in or out, or a session that ends, sends the current page through the guards again. (RouterProvider
  // hands the new context to the router as it renders; the guards read it when invalidated.)
  useEffect(() => {
    if (seen.current === session) return;
    seen.current = session;
    void router.invalidate();
  }, [router, session]);
  return <RouterProvider router={router} context={{ session }} />;
}
