// The page a password reset link opens (/reset-password#token=…). The token is in the fragment, which the browser
// sends to no server; the page takes it, removes it from the address bar and history, and asks for a new password.
// Setting it signs this browser in. Like every page here it loads nothing from another site, and leadrun answers
// with Referrer-Policy: no-referrer.
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { api, ApiError } from '../api/client';
import { Alert, Button, Field, LoadingBlock } from '../components/ui';
import { displayName, formatDateTime } from '../lib/format';
import { useFormSubmit } from '../lib/forms';
import { Link } from '../lib/router';
import { useSession } from '../lib/session';
import { useTitle } from '../lib/query';

const tokenInAddress = () => new URLSearchParams(window.location.hash.replace(/^#/, '')).get('token');

type LinkOwner = { name: string | null; email: string | null; expiresAt: string };
type Check = { status: 'checking' } | { status: 'ready'; link: LinkOwner } | { status: 'refused'; message: string };

/** "is not valid; ask an admin…" → "This link is not valid; ask an admin…." */
function refusal(error: unknown): string {
  if (error instanceof ApiError && error.status === 429) return error.detail;
  if (error instanceof ApiError && error.fieldError('token')) return `This link ${error.fieldError('token')}.`;
  return error instanceof Error ? error.message : 'Something went wrong.';
}

export function ResetPasswordPage() {
  useTitle('Set a new password');
  const [token] = useState(tokenInAddress);
  const [check, setCheck] = useState<Check>(token ? { status: 'checking' } : {
    status: 'refused', message: 'This page needs the link an admin of your workspace gave you. Open that link again, or ask for a new one.',
  });

  // The token leaves the address bar, and so the history, as soon as it is read.
  useEffect(() => {
    if (window.location.hash) window.history.replaceState(window.history.state, '', `${window.location.pathname}${window.location.search}`);
  }, []);

  useEffect(() => {
    if (!token) return;
    let live = true;
    api.post('/ui/api/password-reset/check', { body: { token }, quietUnauthorized: true })
      .then(({ body }) => { if (live) setCheck({ status: 'ready', link: body }); })
      .catch((error: unknown) => { if (live) setCheck({ status: 'refused', message: refusal(error) }); });
    return () => { live = false; };
  }, [token]);

  return (
    <div className="auth-card">
      <h1 className="auth-title">Set a new password</h1>
      {check.status === 'checking' && <LoadingBlock label="Checking your link" />}
      {check.status === 'refused' && (
        <>
          <Alert tone="error" title="This link cannot be used">{check.message}</Alert>
          <p className="auth-note"><Link to="/signin">Go to sign in</Link></p>
        </>
      )}
      {check.status === 'ready' && token && (
        <NewPasswordForm token={token} link={check.link} onRefused={(message) => setCheck({ status: 'refused', message })} />
      )}
    </div>
  );
}

const FIELDS = ['password', 'confirm'] as const;

function NewPasswordForm({ token, link, onRefused }: { token: string; link: LinkOwner; onRefused(message: string): void }) {
  const { signedIn } = useSession();
  const navigate = useNavigate();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const { errors, busy, formRef, onSubmit } = useFormSubmit({
    known: FIELDS,
    check: () => {
      const local: Record<string, string> = {};
      if (password.length < 10) local.password = 'Use at least 10 characters.';
      if (confirm !== password) local.confirm = 'The two passwords are not the same.';
      return local;
    },
    send: async () => {
      const { body } = await api.post('/ui/api/password-reset', { body: { token, password }, quietUnauthorized: true });
      signedIn(body);
      void navigate({ to: '/leads', replace: true });
    },
    failed: (error, form) => {
      if (error instanceof ApiError && (error.fieldError('token') || error.status === 429)) onRefused(refusal(error));
      else form.show(error);
    },
  });
  return (
    <>
      <p className="auth-lead">For {displayName(link)}{link.email && link.name ? ` (${link.email})` : ''}. The link works until {formatDateTime(link.expiresAt)}.</p>
      <form ref={formRef} onSubmit={onSubmit} noValidate className="form">
        {errors.form && <Alert tone="error">{errors.form}</Alert>}
        <input type="text" name="username" autoComplete="username" value={link.email ?? ''} readOnly hidden />
        <Field label="New password" error={errors.fields.password} hint="At least 10 characters.">
          {(p) => <input {...p} className="input" type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} autoFocus />}
        </Field>
        <Field label="New password again" error={errors.fields.confirm}>
          {(p) => <input {...p} className="input" type="password" autoComplete="new-password" value={confirm} onChange={(e) => setConfirm(e.target.value)} />}
        </Field>
        <Button type="submit" variant="primary" busy={busy} className="button-block">Set password and sign in</Button>
      </form>
      <p className="auth-note">You will be signed out everywhere else.</p>
    </>
  );
}
