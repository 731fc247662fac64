// Settings / Your profile (everyone): your name, the sender name and signature of the e-mails sent in your name, and
// your password. Changing the password signs you out everywhere else; this browser is given a new session and stays
// signed in.
import { useState } from 'react';
import { signOff, SIGNATURE_SEPARATOR } from '../../../../src/agent/sign-off.ts';
import { api } from '../../api/client';
import { useToast } from '../../components/Toast';
import { Alert, Badge, Button, Card, ErrorAlert, Field, LoadingBlock, PageHeader } from '../../components/ui';
import { useFormSubmit } from '../../lib/forms';
import { useSession, useSignedIn } from '../../lib/session';
import { useApiQuery, useTitle } from '../../lib/query';

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
      <Card title="Your e-mails">
        <SenderForm />
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

const SENDER_FIELDS = ['senderName', 'signature'] as const;
const SIGNATURE_MAX = 2000;
const SIGNATURE_MAX_LINES = 20;

/** The signature as the server keeps it: trailing spaces and blank lines at either end dropped. */
function tidySignature(text: string): string {
  return text.replace(/\r\n?/g, '\n').split('\n').map((line) => line.replace(/[ \t]+$/, '')).join('\n').replace(/^\n+|\n+$/g, '');
}

function SenderForm() {
  const profile = useApiQuery(['profile'], (signal) => api.get('/ui/api/profile', { signal }).then((r) => r.body));
  if (profile.error) return <ErrorAlert error={profile.error} retry={profile.reload} />;
  if (!profile.data) return <LoadingBlock label="Loading your profile" />;
  return <SenderFormFields senderName={profile.data.senderName} signature={profile.data.signature} />;
}

function SenderFormFields(saved: { senderName: string | null; signature: string | null }) {
  const session = useSignedIn();
  const { signedIn } = useSession();
  const toast = useToast();
  const [stored, setStored] = useState(saved);
  const [senderName, setSenderName] = useState(saved.senderName ?? '');
  const [signature, setSignature] = useState(saved.signature ?? '');
  const tidy = tidySignature(signature);
  const lines = tidy ? tidy.split('\n').length : 0;
  const dirty = senderName.trim() !== (stored.senderName ?? '') || tidy !== (stored.signature ?? '');
  const { errors, busy, formRef, onSubmit } = useFormSubmit({
    known: SENDER_FIELDS,
    check: () => {
      const local: Record<string, string> = {};
      if (senderName.trim().length > 100) local.senderName = 'Use at most 100 characters.';
      if (tidy.length > SIGNATURE_MAX) local.signature = `Use at most ${SIGNATURE_MAX.toLocaleString('en')} characters.`;
      else if (lines > SIGNATURE_MAX_LINES) local.signature = `Use at most ${SIGNATURE_MAX_LINES} lines.`;
      return local;
    },
    send: async () => {
      const { body } = await api.patch('/ui/api/profile', { body: { senderName: senderName.trim() || null, signature: tidy || null } });
      signedIn(body);
      setStored({ senderName: body.profile.senderName, signature: body.profile.signature });
      setSenderName(body.profile.senderName ?? '');
      setSignature(body.profile.signature ?? '');
      toast('Your sender name and signature were saved.');
    },
  });
  const shownName = senderName.trim() || session.user.name || 'You';
  // The ending as the drafts and the e-mails sent have it: the one sign-off (src/agent/sign-off.ts).
  const signed = signOff({ name: shownName, signature: tidy || null });
  const separator = signed.indexOf(`\n${SIGNATURE_SEPARATOR}\n`);
  const ending = separator < 0 ? { closing: signed, signature: '' }
    : { closing: signed.slice(0, separator), signature: signed.slice(separator) };
  return (
    <form ref={formRef} onSubmit={onSubmit} noValidate className="form" aria-label="Your sender name and signature">
      {errors.form && <Alert tone="error">{errors.form}</Alert>}
      <Field label="Sender name" optional error={errors.fields.senderName} hint="The name your e-mails come from. Left empty: the workspace's sender name.">
        {(p) => <input {...p} className="input" value={senderName} onChange={(e) => setSenderName(e.target.value)} maxLength={100}
          placeholder={session.user.name ?? ''} autoComplete="off" />}
      </Field>
      <Field label="Signature" optional error={errors.fields.signature}
        counter={<span className={tidy.length > SIGNATURE_MAX || lines > SIGNATURE_MAX_LINES ? 'field-count-over' : undefined}>
          {tidy.length.toLocaleString('en')} / {SIGNATURE_MAX.toLocaleString('en')} characters, {lines} / {SIGNATURE_MAX_LINES} lines</span>}>
        {(p) => <textarea {...p} className="input textarea signature-input" rows={5} value={signature} onChange={(e) => setSignature(e.target.value)}
          placeholder={`${session.user.name ?? 'Your name'}\nAccount executive, ${session.workspace.name}`} spellCheck={false} />}
      </Field>
      <div className="field">
        <p className="field-label" id="signature-preview-label">How your e-mails end</p>
        <pre className="signature-preview" aria-labelledby="signature-preview-label" data-testid="signature-preview">
          {`… the last paragraph of the draft.\n\n${ending.closing}`}
          {ending.signature && <span className="signature-preview-signature">{ending.signature}</span>}
        </pre>
      </div>
      <div><Button type="submit" variant="primary" busy={busy} disabled={!dirty}>Save sender name and signature</Button></div>
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
