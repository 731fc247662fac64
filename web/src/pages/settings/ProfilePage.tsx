// Settings / Your profile (everyone): your name, and your password. Changing the password signs you out
// everywhere else; this browser is given a new session and stays signed in.
import { useState } from 'react';
import { api } from '../../api/client';
import { useToast } from '../../components/Toast';
import { Alert, Badge, Button, Card, Field, PageHeader } from '../../components/ui';
import { useFormSubmit } from '../../lib/forms';
import { useSession, useSignedIn } from '../../lib/session';
import { useTitle } from '../../lib/useAsync';

export function ProfilePage() {
  useTitle('Your profile');
  const session = useSignedIn();
  return (
    <>
      <PageHeader eyebrow="Settings" title="Your profile" description="How you appear to your team, and the password you sign in with." />
      <Card title="You">
        <dl className="profile-facts">
          <dt>E-mail</dt><dd>{session.user.email ?? '—'}</dd>
          <dt>Role</dt><dd><Badge tone={session.user.role === 'ADMIN' ? 'violet' : 'neutral'}>{session.user.role === 'ADMIN' ? 'Admin' : 'Member'}</Badge></dd>
          <dt>Workspace</dt><dd>{session.workspace.name}</dd>
        </dl>
        <NameForm />
      </Card>
      <Card title="Password">
        <PasswordForm />
      </Card>
    </>
  );
}

const NAME_FIELDS = ['name'] as const;

function NameForm() {
  const session = useSignedIn();
  const { signedIn } = useSession();
  const toast = useToast();
  const [name, setName] = useState(session.user.name ?? '');
  const { errors, busy, formRef, onSubmit } = useFormSubmit({
    known: NAME_FIELDS,
    check: (): Record<string, string> => (name.trim() ? {} : { name: 'Enter your name.' }),
    send: async () => {
      const { body } = await api.patch('/ui/api/profile', { body: { name: name.trim() } });
      signedIn(body);
      setName(body.user.name ?? '');
      toast('Your name was saved.');
    },
  });
  return (
    <form ref={formRef} onSubmit={onSubmit} noValidate className="form" aria-label="Your name">
      {errors.form && <Alert tone="error">{errors.form}</Alert>}
      <Field label="Name" error={errors.fields.name}>
        {(p) => <input {...p} className="input" value={name} onChange={(e) => setName(e.target.value)} autoComplete="name" maxLength={200} />}
      </Field>
      <div><Button type="submit" variant="primary" busy={busy} disabled={name.trim() === (session.user.name ?? '')}>Save name</Button></div>
    </form>
  );
}

const PASSWORD_FIELDS = ['currentPassword', 'newPassword', 'confirm'] as const;

function PasswordForm() {
  const session = useSignedIn();
  const { signedIn } = useSession();
  const toast = useToast();
  const empty = { currentPassword: '', newPassword: '', confirm: '' };
  const [values, setValues] = useState(empty);
  const change = (field: keyof typeof values) => (event: { target: { value: string } }) => setValues((v) => ({ ...v, [field]: event.target.value }));
  const { errors, busy, formRef, onSubmit } = useFormSubmit({
    known: PASSWORD_FIELDS,
    check: () => {
      const local: Record<string, string> = {};
      if (!values.currentPassword) local.currentPassword = 'Enter the password you signed in with.';
      if (values.newPassword.length < 10) local.newPassword = 'Use at least 10 characters.';
      else if (values.newPassword === values.currentPassword) local.newPassword = 'Choose a password other than your current one.';
      if (values.confirm !== values.newPassword) local.confirm = 'The two new passwords are not the same.';
      return local;
    },
    send: async () => {
      const { body } = await api.post('/ui/api/profile/password', { body: { currentPassword: values.currentPassword, newPassword: values.newPassword } });
      signedIn(body);
      setValues(empty);
      toast('Your password was changed. You were signed out everywhere else.');
    },
  });
  return (
    <form ref={formRef} onSubmit={onSubmit} noValidate className="form" aria-label="Change your password">
      {errors.form && <Alert tone="error">{errors.form}</Alert>}
      {/* For password managers: the account the new password belongs to. */}
      <input type="text" name="username" autoComplete="username" value={session.user.email ?? ''} readOnly hidden />
      <Field label="Current password" error={errors.fields.currentPassword}>
        {(p) => <input {...p} className="input" type="password" value={values.currentPassword} onChange={change('currentPassword')} autoComplete="current-password" />}
      </Field>
      <div className="form-row">
        <Field label="New password" error={errors.fields.newPassword} hint="At least 10 characters.">
          {(p) => <input {...p} className="input" type="password" value={values.newPassword} onChange={change('newPassword')} autoComplete="new-password" />}
        </Field>
        <Field label="New password again" error={errors.fields.confirm}>
          {(p) => <input {...p} className="input" type="password" value={values.confirm} onChange={change('confirm')} autoComplete="new-password" />}
        </Field>
      </div>
      <p className="small muted">Changing it signs you out on every other device; you stay signed in here.</p>
      <div><Button type="submit" variant="primary" busy={busy}>Change password</Button></div>
    </form>
  );
}
