// First run: the installation is empty, so the person here creates the workspace and becomes its admin, and may say
// who its e-mails come from (DESIGN §15), with the footer they will carry; left out, Settings / E-mail asks later.
import { useState } from 'react';
import { api, ApiError } from '../api/client';
import { FooterPreview } from '../components/FooterPreview';
import { Alert, Button, Field } from '../components/ui';
import { isEmail, useFormSubmit } from '../lib/forms';
import { useTitle } from '../lib/query';
import { useSession } from '../lib/session';

const FIELDS = ['setupToken', 'workspaceName', 'name', 'email', 'password', 'fromName', 'fromAddress', 'companyName', 'postalAddress'] as const;
const IDENTITY = ['fromName', 'fromAddress', 'companyName', 'postalAddress'] as const;

export function SetupPage() {
  useTitle('Set up leadrun');
  const { state, signedIn, retry } = useSession();
  // Served on an address other machines reach: setup needs the token `leadrun serve` printed when it started.
  const tokenRequired = state.status === 'setup' && state.tokenRequired;
  const [values, setValues] = useState({
    setupToken: '', workspaceName: '', name: '', email: '', password: '', fromName: '', fromAddress: '', companyName: '', postalAddress: '',
  });
  const [alreadySetUp, setAlreadySetUp] = useState(false);
  const change = (name: keyof typeof values) => (event: { target: { value: string } }) => setValues((v) => ({ ...v, [name]: event.target.value }));

  const { errors, busy, formRef, onSubmit } = useFormSubmit({
    known: FIELDS,
    check: () => {
      const local: Record<string, string> = {};
      if (tokenRequired && !values.setupToken.trim()) local.setupToken = 'Enter the setup token that leadrun printed when it started.';
      if (!values.workspaceName.trim()) local.workspaceName = 'Name your workspace, e.g. your company or team.';
      if (!values.name.trim()) local.name = 'Enter your name.';
      if (!isEmail(values.email.trim())) local.email = 'Enter an e-mail address like name@company.com.';
      if (values.password.length < 10) local.password = 'Use at least 10 characters.';
      if (values.fromAddress.trim() && !isEmail(values.fromAddress.trim())) local.fromAddress = 'Enter an e-mail address like sales@company.com, or leave it empty.';
      return local;
    },
    send: async () => {
      // The sender's identity is sent only as far as it was typed: what is left out stays to be set in Settings / E-mail.
      const identity = Object.fromEntries(IDENTITY.map((field) => [field, values[field].trim()]).filter(([, value]) => value));
      const { body } = await api.post('/ui/api/setup', {
        body: {
          workspaceName: values.workspaceName.trim(), name: values.name.trim(), email: values.email.trim(), password: values.password,
          ...(tokenRequired ? { setupToken: values.setupToken.trim() } : {}),
          ...identity,
        },
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
        {tokenRequired && (
          <Field label="Setup token" error={errors.fields.setupToken} hint={<>Printed by <code>leadrun serve</code> when it started, in its terminal or its log.</>}>
            {(p) => <input {...p} className="input mono" autoComplete="off" spellCheck={false} value={values.setupToken} onChange={change('setupToken')} autoFocus />}
          </Field>
        )}
        <Field label="Workspace name" error={errors.fields.workspaceName} hint="Usually your company or sales team.">
          {(p) => <input {...p} className="input" autoComplete="organization" value={values.workspaceName} onChange={change('workspaceName')} autoFocus={!tokenRequired} />}
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
        <fieldset className="fieldset" aria-describedby="setup-sender-help">
          <legend className="field-label">Who your e-mails come from</legend>
          <p id="setup-sender-help" className="muted small">
            Every e-mail carries an unsubscribe link and a footer with your company's name and postal address. Nothing is sent until they
            are known; you can also set them later in Settings / E-mail.
          </p>
          <div className="form-row">
            <Field label="Sender name" optional error={errors.fields.fromName} hint="Left empty: each person's own name.">
              {(p) => <input {...p} className="input" value={values.fromName} onChange={change('fromName')} maxLength={100}
                placeholder={values.name.trim() || 'Acme Sales'} autoComplete="off" />}
            </Field>
            <Field label="From address" optional error={errors.fields.fromAddress}>
              {(p) => <input {...p} className="input" type="email" value={values.fromAddress} onChange={change('fromAddress')} maxLength={254}
                placeholder={values.email.trim() || 'sales@company.com'} autoComplete="off" />}
            </Field>
          </div>
          <Field label="Company" optional error={errors.fields.companyName} hint="Left empty: the workspace's name.">
            {(p) => <input {...p} className="input" value={values.companyName} onChange={change('companyName')} maxLength={200}
              placeholder={values.workspaceName.trim() || undefined} autoComplete="organization" />}
          </Field>
          <Field label="Postal address" optional error={errors.fields.postalAddress} hint="Street, town and postcode, as the footer shows it (CAN-SPAM asks for one).">
            {(p) => <textarea {...p} className="input textarea" rows={3} value={values.postalAddress} onChange={change('postalAddress')} maxLength={500}
              placeholder="1 Main Street, Springfield, IL 62701" autoComplete="street-address" />}
          </Field>
          <FooterPreview companyName={values.companyName.trim() || values.workspaceName} postalAddress={values.postalAddress} />
        </fieldset>
        <Button type="submit" variant="primary" busy={busy} className="button-block">Create workspace</Button>
      </form>
    </div>
  );
}
