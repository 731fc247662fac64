// First run: the installation is empty, so the person here creates the workspace and becomes its admin.
import { useState } from 'react';
import { api, ApiError } from '../api/client';
import { Alert, Button, Field } from '../components/ui';
import { isEmail, useFormSubmit } from '../lib/forms';
import { useTitle } from '../lib/useAsync';
import { useSession } from '../lib/session';

const FIELDS = ['workspaceName', 'name', 'email', 'password'] as const;

export function SetupPage() {
  useTitle('Set up leadrun');
  const { signedIn, retry } = useSession();
  const [values, setValues] = useState({ workspaceName: '', name: '', email: '', password: '' });
  const [alreadySetUp, setAlreadySetUp] = useState(false);
  const change = (name: keyof typeof values) => (event: { target: { value: string } }) => setValues((v) => ({ ...v, [name]: event.target.value }));

  const { errors, busy, formRef, onSubmit } = useFormSubmit({
    known: FIELDS,
    check: () => {
      const local: Record<string, string> = {};
      if (!values.workspaceName.trim()) local.workspaceName = 'Name your workspace, e.g. your company or team.';
      if (!values.name.trim()) local.name = 'Enter your name.';
      if (!isEmail(values.email.trim())) local.email = 'Enter an e-mail address like name@company.com.';
      if (values.password.length < 10) local.password = 'Use at least 10 characters.';
      return local;
    },
    send: async () => {
      const { body } = await api.post('/ui/api/setup', {
        body: { workspaceName: values.workspaceName.trim(), name: values.name.trim(), email: values.email.trim(), password: values.password },
      });
      signedIn(body);
    },
    failed: (error, { show }) => {
      if (error instanceof ApiError && error.code === 'invalid_state') setAlreadySetUp(true);
      else show(error);
    },
  });

  if (alreadySetUp) {
    return (
      <div className="auth-card">
        <h1 className="auth-title">leadrun is already set up</h1>
        <p className="auth-lead">Someone finished setting up this installation. Sign in with the account they gave you.</p>
        <Button variant="primary" onClick={retry}>Go to sign-in</Button>
      </div>
    );
  }

  return (
    <div className="auth-card">
      <h1 className="auth-title">Set up your workspace</h1>
      <p className="auth-lead">This installation is new. Create the workspace your team will share, and your admin account.</p>
      <form ref={formRef} onSubmit={onSubmit} noValidate className="form">
        {errors.form && <Alert tone="error">{errors.form}</Alert>}
        <Field label="Workspace name" error={errors.fields.workspaceName} hint="Usually your company or sales team.">
          {(p) => <input {...p} className="input" autoComplete="organization" value={values.workspaceName} onChange={change('workspaceName')} autoFocus />}
        </Field>
        <div className="form-row">
          <Field label="Your name" error={errors.fields.name}>
            {(p) => <input {...p} className="input" autoComplete="name" value={values.name} onChange={change('name')} />}
          </Field>
          <Field label="Work e-mail" error={errors.fields.email}>
            {(p) => <input {...p} className="input" type="email" autoComplete="email" value={values.email} onChange={change('email')} />}
          </Field>
        </div>
        <Field label="Password" error={errors.fields.password} hint="At least 10 characters.">
          {(p) => <input {...p} className="input" type="password" autoComplete="new-password" value={values.password} onChange={change('password')} />}
        </Field>
        <Button type="submit" variant="primary" busy={busy} className="button-block">Create workspace</Button>
      </form>
    </div>
  );
}
