import { useEffect, useState } from 'react';
import { api, ApiError } from '../api/client';
import { Alert, Button, Field } from '../components/ui';
import { isEmail, useFormSubmit } from '../lib/forms';
import { useNavigate } from '@tanstack/react-router';
import { useSession } from '../lib/session';
import { useTitle } from '../lib/query';

const FIELDS = ['email', 'password'] as const;

export function SignInPage({ expired, next }: { expired: boolean; next: string }) {
  useTitle('Sign in');
  const { signedIn } = useSession();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [waitUntil, setWaitUntil] = useState<number | null>(null);
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    if (!waitUntil) return;
    const timer = window.setInterval(() => {
      setNow(Date.now());
      if (Date.now() >= waitUntil) setWaitUntil(null);
    }, 1000);
    return () => window.clearInterval(timer);
  }, [waitUntil]);

  const { errors, busy, formRef, onSubmit } = useFormSubmit({
    known: FIELDS,
    check: () => {
      const local: Record<string, string> = {};
      if (!isEmail(email.trim())) local.email = 'Enter the e-mail address you sign in with.';
      if (!password) local.password = 'Enter your password.';
      return local;
    },
    send: async () => {
      const { body } = await api.post('/ui/api/session', { body: { email: email.trim(), password }, quietUnauthorized: true });
      signedIn(body);
      // `next` is the address asked for before signing in (routes.tsx `returnPath`), taken as it was.
      void navigate({ href: next, replace: true });
    },
    // Sign-in leaves focus where it is after the server answers, so no `show`.
    failed: (error, { fromError, clear }) => {
      if (error instanceof ApiError && error.status === 401) {
        fromError(new Error('That e-mail and password do not match an account here.'));
      } else if (error instanceof ApiError && error.status === 429) {
        const seconds = error.retryAfter ?? 60;
        setWaitUntil(Date.now() + seconds * 1000);
        setNow(Date.now());
        clear();
      } else {
        fromError(error);
      }
    },
  });

  const waitSeconds = waitUntil ? Math.max(0, Math.ceil((waitUntil - now) / 1000)) : 0;
  return (
    <div className="auth-card">
      <h1 className="auth-title">Sign in</h1>
      <p className="auth-lead">Welcome back. Sign in to your team's leads and drafts.</p>
      <form ref={formRef} onSubmit={onSubmit} noValidate className="form">
        {expired && !errors.form && <Alert tone="info">Your session ended. Sign in again to continue.</Alert>}
        {errors.form && <Alert tone="error">{errors.form}</Alert>}
        {waitUntil && (
          <Alert tone="warning" title="Too many attempts">
            For your security, sign-in is paused. Try again in {waitText(waitSeconds)}.
          </Alert>
        )}
        <Field label="E-mail" error={errors.fields.email}>
          {(p) => <input {...p} className="input" type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />}
        </Field>
        <Field label="Password" error={errors.fields.password}>
          {(p) => <input {...p} className="input" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} />}
        </Field>
        <Button type="submit" variant="primary" busy={busy} disabled={Boolean(waitUntil)} className="button-block">Sign in</Button>
      </form>
      <p className="auth-note">Forgot your password? Ask an admin of your workspace.</p>
    </div>
  );
}

function waitText(seconds: number): string {
  if (seconds >= 90) return `${Math.ceil(seconds / 60)} minutes`;
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}
