// Settings / E-mail (admins only): the workspace's sender, what an approval does by default, and the mail servers:
// SMTP to send, IMAP to save drafts into a mailbox and to find replies. A stored password is never shown, only that
// one is saved; "Check connection" tries the form as it stands, "Send test e-mail" what was saved. A saved password
// goes only to the host, port, user and security it was saved with: the form says so, and asks for it again when
// any of them changes (the server drops it then, src/mail/settings.ts).
import { ReplySettingsCard } from './ReplySettingsCard';
import { useEffect, useState } from 'react';
import { api, ApiError, type RequestOf, type ResponseOf } from '../../api/client';
import { FooterPreview } from '../../components/FooterPreview';
import { useToast } from '../../components/Toast';
import { Alert, Badge, Button, Card, ErrorAlert, Field, LoadingBlock } from '../../components/ui';
import { isEmail, useFormSubmit } from '../../lib/forms';
import { useSignedIn } from '../../lib/session';
import { useApiQuery } from '../../lib/query';
import { AdminOnly } from './AdminOnly';
import { SendingSettingsCard } from './SendingSettingsCard';

type MailSettings = ResponseOf<'get', '/ui/api/settings/email'>;
type MailSettingsChange = RequestOf<'put', '/ui/api/settings/email'>;
type Security = 'tls' | 'starttls' | 'none';
type Deliver = 'send' | 'mailbox' | 'none';

/** What the connection checks and the test e-mail answer. */
interface CheckResult { ok: boolean; error?: string; messageId?: string }

// The checks and the test e-mail have routes of their own (src/http/ui/), called here by their paths.
const postUntyped = api.post as unknown as (path: string, options: { body: unknown }) => Promise<{ body: CheckResult }>;

const SMTP_PORTS: Record<Security, number> = { tls: 465, starttls: 587, none: 25 };
const IMAP_PORTS: Record<Security, number> = { tls: 993, starttls: 143, none: 143 };
const SECURITY_LABELS: Record<Security, string> = { tls: 'TLS (SSL)', starttls: 'STARTTLS', none: 'None (unencrypted)' };
const DELIVER_CHOICES: Array<{ value: Deliver; title: string; help: string }> = [
  { value: 'send', title: 'Send', help: 'Approving sends the e-mail over SMTP.' },
  { value: 'mailbox', title: 'Save to mailbox', help: 'Approving saves it to the sender\'s Drafts folder over IMAP.' },
  { value: 'none', title: 'Approve only', help: 'Approving only marks the draft approved.' },
];

/**
 * A server section as the form holds it. `password: null` keeps the saved password (while `savedFor` still matches);
 * a text replaces it.
 */
interface ServerForm {
  host: string; port: string; security: Security; user: string;
  password: string | null; passwordSet: boolean; draftsFolder: string;
  /** The host, port, security and user the saved password is bound to, as saved; null for a server not saved yet. */
  savedFor: { host: string; port: string; security: Security; user: string } | null;
}

const DROPPED = 'it goes only to the server, port, security and user it was saved with.';

/** A host as a resolver sees it, as the server compares them: without brackets, a final dot or capitals. */
const hostKey = (host: string) => host.trim().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();

/** Whether the saved password still applies: the form names the host, port, security and user it was saved with. */
function keepsSavedPassword(server: ServerForm): boolean {
  const saved = server.savedFor;
  return server.passwordSet && saved !== null && hostKey(server.host) === hostKey(saved.host)
    && Number(server.port) === Number(saved.port) && server.security === saved.security
    && server.user.trim() === saved.user;
}

interface FormState {
  fromName: string;
  fromAddress: string;
  defaultDeliver: Deliver;
  smtp: ServerForm | null;
  imap: ServerForm | null;
  /** The sender's identity the footer carries (DESIGN §15). */
  companyName: string;
  postalAddress: string;
  footerEnabled: boolean;
  /** Takes unsubscribe requests by mail: List-Unsubscribe's `mailto:` beside the link. */
  unsubscribeAddress: string;
}

function formOf(view: MailSettings): FormState {
  const server = (s: MailSettings['smtp'] | MailSettings['imap'], drafts = ''): ServerForm | null => s && {
    host: s.host, port: String(s.port), security: s.security, user: s.user ?? '', password: null, passwordSet: s.passwordSet, draftsFolder: drafts,
    savedFor: { host: s.host, port: String(s.port), security: s.security, user: s.user ?? '' },
  };
  return {
    fromName: view.fromName ?? '',
    fromAddress: view.fromAddress ?? '',
    defaultDeliver: view.defaultDeliver ?? (view.smtp || view.installation.smtp ? 'send' : view.imap ? 'mailbox' : 'none'),
    smtp: server(view.smtp),
    imap: server(view.imap, view.imap?.draftsFolder ?? 'Drafts'),
    companyName: view.identity.companyName ?? '',
    postalAddress: view.identity.postalAddress ?? '',
    footerEnabled: view.identity.footerEnabled,
    unsubscribeAddress: view.identity.unsubscribeAddress ?? '',
  };
}

const newServer = (kind: 'smtp' | 'imap'): ServerForm => ({
  host: '', port: String(kind === 'smtp' ? SMTP_PORTS.starttls : IMAP_PORTS.tls), security: kind === 'smtp' ? 'starttls' : 'tls',
  user: '', password: '', passwordSet: false, draftsFolder: kind === 'imap' ? 'Drafts' : '', savedFor: null,
});

/** The part of a server section the API takes: the password only when one was typed (or cleared). */
function serverBody(server: ServerForm, kind: 'smtp' | 'imap') {
  const body: Record<string, unknown> = {
    host: server.host.trim(), port: Number(server.port), security: server.security, user: server.user.trim() || null,
  };
  if (server.password !== null) body.password = server.password || null;
  if (kind === 'imap') body.draftsFolder = server.draftsFolder.trim() || null;
  return body;
}

function bodyOf(form: FormState): MailSettingsChange {
  return {
    fromName: form.fromName.trim() || null,
    fromAddress: form.fromAddress.trim() || null,
    defaultDeliver: form.defaultDeliver,
    smtp: form.smtp && serverBody(form.smtp, 'smtp'),
    imap: form.imap && serverBody(form.imap, 'imap'),
    companyName: form.companyName.trim() || null,
    postalAddress: form.postalAddress.trim() || null,
    footerEnabled: form.footerEnabled,
    unsubscribeAddress: form.unsubscribeAddress.trim() || null,
  } as MailSettingsChange;
}

/** The checks made before sending, by the field names the server uses. */
function check(form: FormState): Record<string, string> {
  const errors: Record<string, string> = {};
  if (form.fromAddress.trim() && !isEmail(form.fromAddress.trim())) errors.fromAddress = 'Enter an e-mail address like sales@company.com.';
  if (form.unsubscribeAddress.trim() && !isEmail(form.unsubscribeAddress.trim())) {
    errors.unsubscribeAddress = 'Enter an e-mail address like unsubscribe@company.com, or leave it empty.';
  }
  for (const kind of ['smtp', 'imap'] as const) {
    const server = form[kind];
    if (!server) continue;
    const host = server.host.trim();
    if (!host) errors[`${kind}.host`] = 'Enter the server\'s host name.';
    else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) errors[`${kind}.host`] = `Enter the host name alone, without ${host.split('://')[0]}://.`;
    else if (/\s/.test(host)) errors[`${kind}.host`] = 'A host name has no spaces.';
    else if (/^[^:]+:\d+$/.test(host)) errors[`${kind}.host`] = 'Put the port in the Port field.';
    const port = Number(server.port);
    if (!/^\d+$/.test(server.port.trim()) || port < 1 || port > 65535) errors[`${kind}.port`] = 'Enter a port from 1 to 65535.';
    if (kind === 'imap') {
      if (!server.user.trim()) errors['imap.user'] = 'Enter the mailbox\'s user name.';
      if (!server.passwordSet && !server.password) errors['imap.password'] = 'Enter the mailbox\'s password.';
      if (server.passwordSet && server.password === '') errors['imap.password'] = 'Enter the new password, or keep the saved one.';
      if (server.passwordSet && server.password === null && !keepsSavedPassword(server)) {
        errors['imap.password'] = `Enter the password again: ${DROPPED}`;
      }
    }
  }
  return errors;
}

const KNOWN = ['fromName', 'fromAddress', 'defaultDeliver', 'companyName', 'postalAddress', 'unsubscribeAddress', 'smtp.host', 'smtp.port', 'smtp.security', 'smtp.user', 'smtp.password',
  'imap.host', 'imap.port', 'imap.security', 'imap.user', 'imap.password', 'imap.draftsFolder'] as const;

/** Admins only: the header and the guard are the route's (AdminGate). */
export function EmailSettingsPage() {
  const settings = useApiQuery(['settings', 'email'], (signal) => api.get('/ui/api/settings/email', { signal }).then((r) => r.body));
  if (settings.error instanceof ApiError && settings.error.status === 403) return <AdminOnly what="the e-mail settings" />;
  if (settings.error) return <ErrorAlert error={settings.error} retry={settings.reload} />;
  if (!settings.data) return <LoadingBlock label="Loading the e-mail settings" />;
  return <><SettingsForm view={settings.data} /><SendingSettingsCard /><ReplySettingsCard /></>;
}

function SettingsForm({ view: initial }: { view: MailSettings }) {
  const session = useSignedIn();
  const toast = useToast();
  const [view, setView] = useState(initial);
  const [form, setForm] = useState(() => formOf(initial));
  const [saved, setSaved] = useState(() => JSON.stringify(bodyOf(formOf(initial))));
  const dirty = JSON.stringify(bodyOf(form)) !== saved;

  const { errors, busy, formRef, onSubmit } = useFormSubmit({
    known: KNOWN,
    nested: true,
    check: () => check(form),
    send: async () => {
      const { body } = await api.put('/ui/api/settings/email', { body: bodyOf(form) });
      setView(body);
      const next = formOf(body);
      setForm(next);
      setSaved(JSON.stringify(bodyOf(next)));
      toast('The e-mail settings were saved.');
    },
  });

  const set = <K extends keyof FormState>(key: K, value: FormState[K]) => setForm((f) => ({ ...f, [key]: value }));
  const setServer = (kind: 'smtp' | 'imap', change: Partial<ServerForm>) =>
    setForm((f) => (f[kind] ? { ...f, [kind]: { ...f[kind]!, ...change } } : f));
  const installationFrom = view.installation.from;

  return (
    <form ref={formRef} onSubmit={onSubmit} noValidate className="form" aria-label="E-mail settings">
      {errors.form && <Alert tone="error">{errors.form}</Alert>}
      <Card title="Sender" titleId="mail-sender">
        <div className="form">
          <div className="form-row">
            <Field label="Name" optional error={errors.fields.fromName} hint="People's own sender names, set in their profiles, come first.">
              {(p) => <input {...p} className="input" value={form.fromName} onChange={(e) => set('fromName', e.target.value)} maxLength={100}
                placeholder={installationFrom?.name ?? 'Acme Sales'} autoComplete="off" />}
            </Field>
            <Field label="Address" optional error={errors.fields.fromAddress}
              hint={installationFrom ? `Left empty: ${installationFrom.address} (MAIL_FROM).` : 'Left empty: the SMTP user, when it is an address.'}>
              {(p) => <input {...p} className="input" type="email" value={form.fromAddress} onChange={(e) => set('fromAddress', e.target.value)}
                placeholder={installationFrom?.address ?? 'sales@company.com'} autoComplete="off" />}
            </Field>
          </div>
          <fieldset className="fieldset">
            <legend className="field-label">Default on approval</legend>
            <div className="radio-cards radio-cards-3">
              {DELIVER_CHOICES.map((choice) => (
                <label key={choice.value} className="radio-card">
                  <input type="radio" name="defaultDeliver" value={choice.value} checked={form.defaultDeliver === choice.value}
                    onChange={() => set('defaultDeliver', choice.value)} />
                  <span><strong>{choice.title}</strong><span className="checkbox-help">{choice.help}</span></span>
                </label>
              ))}
            </div>
            {errors.fields.defaultDeliver && <p className="field-error">{errors.fields.defaultDeliver}</p>}
          </fieldset>
        </div>
      </Card>

      <Card title="Company and footer" titleId="mail-identity">
        <div className="form">
          <p className="muted small">
            Every e-mail carries a one-click unsubscribe link and, with the footer on, your company's name and postal address. Nothing is
            delivered until they are known.
          </p>
          <div className="form-row">
            <Field label="Company" optional error={errors.fields.companyName} hint="The company e-mails come from. Left empty: the workspace's name.">
              {(p) => <input {...p} className="input" value={form.companyName} onChange={(e) => set('companyName', e.target.value)} maxLength={200} autoComplete="organization" />}
            </Field>
            <Field label="Street, town and postcode" optional error={errors.fields.postalAddress}
              hint={view.installation.postalAddress
                ? `The postal address the footer shows. Left empty: ${view.installation.postalAddress} (MAIL_POSTAL_ADDRESS).`
                : 'The postal address the footer shows: required while the footer is on.'}>
              {(p) => <textarea {...p} className="input textarea" rows={3} value={form.postalAddress} onChange={(e) => set('postalAddress', e.target.value)} maxLength={500}
                placeholder={view.installation.postalAddress ?? '1 Main Street, Springfield, IL 62701'} autoComplete="street-address" />}
            </Field>
          </div>
          <Field label="Unsubscribe by e-mail" optional error={errors.fields.unsubscribeAddress}
            hint="Mail clients may offer to write to it besides the link. leadrun does not read that mailbox: add who writes to it to Suppressions.">
            {(p) => <input {...p} className="input" type="email" value={form.unsubscribeAddress} onChange={(e) => set('unsubscribeAddress', e.target.value)}
              maxLength={254} placeholder="unsubscribe@company.com" autoComplete="off" />}
          </Field>
          <label className="checkbox">
            <input type="checkbox" checked={form.footerEnabled} onChange={(e) => set('footerEnabled', e.target.checked)} />
            <span>Add the footer to every e-mail</span>
          </label>
          {form.footerEnabled && (
            <FooterPreview companyName={form.companyName} postalAddress={form.postalAddress.trim() || view.installation.postalAddress || ''} />
          )}
        </div>
      </Card>

      <Card title="Sending (SMTP)" titleId="mail-smtp"
        actions={form.smtp ? <Button size="small" variant="ghost" icon="x" onClick={() => set('smtp', null)}>Remove SMTP</Button> : undefined}>
        {form.smtp ? (
          <div className="form">
            <ServerFields kind="smtp" server={form.smtp} errors={errors.fields} onChange={(c) => setServer('smtp', c)} />
            <ConnectionCheck kind="smtp" server={form.smtp} />
            <TestEmail to={session.user.email} disabled={dirty || !view.smtp}
              why={dirty ? 'Save your changes first: the test uses the saved settings.' : null} />
          </div>
        ) : (
          <div className="form">
            {view.installation.smtp
              ? <Alert tone="info">Using the installation's server {view.installation.smtp.host}:{view.installation.smtp.port} (SMTP_URL).</Alert>
              : <p className="muted">No SMTP server: approved drafts cannot be sent from leadrun.</p>}
            {view.installation.smtp && !dirty && <TestEmail to={session.user.email} disabled={false} why={null} />}
            <div><Button icon="plus" onClick={() => set('smtp', newServer('smtp'))}>Set up SMTP</Button></div>
          </div>
        )}
      </Card>

      <Card title="Mailbox (IMAP)" titleId="mail-imap"
        actions={form.imap ? <Button size="small" variant="ghost" icon="x" onClick={() => set('imap', null)}>Remove IMAP</Button> : undefined}>
        {form.imap ? (
          <div className="form">
            <ServerFields kind="imap" server={form.imap} errors={errors.fields} onChange={(c) => setServer('imap', c)} />
            <ConnectionCheck kind="imap" server={form.imap} />
          </div>
        ) : (
          <div className="form">
            <p className="muted">No IMAP mailbox: drafts cannot be saved to a mailbox, and replies are not looked for.</p>
            <div><Button icon="plus" onClick={() => set('imap', newServer('imap'))}>Set up IMAP</Button></div>
          </div>
        )}
      </Card>

      <div className="form-actions">
        <Button type="submit" variant="primary" busy={busy} disabled={!dirty}>Save</Button>
        {dirty && <span className="small muted">You have unsaved changes.</span>}
      </div>
    </form>
  );
}

function ServerFields({ kind, server, errors, onChange }: {
  kind: 'smtp' | 'imap'; server: ServerForm; errors: Record<string, string>; onChange(change: Partial<ServerForm>): void;
}) {
  const ports = kind === 'smtp' ? SMTP_PORTS : IMAP_PORTS;
  const name = kind === 'smtp' ? 'SMTP' : 'IMAP';
  // A port that is the default of the old security follows the new one; a port someone typed stays.
  const setSecurity = (security: Security) =>
    onChange({ security, ...(server.port === '' || Number(server.port) === ports[server.security] ? { port: String(ports[security]) } : {}) });
  return (
    <>
      <div className="form-row form-row-3">
        <Field label={`${name} server`} error={errors[`${kind}.host`]}>
          {(p) => <input {...p} className="input" value={server.host} onChange={(e) => onChange({ host: e.target.value })}
            placeholder={kind === 'smtp' ? 'smtp.company.com' : 'imap.company.com'} autoComplete="off" autoCapitalize="off" spellCheck={false} maxLength={253} />}
        </Field>
        <Field label="Security" error={errors[`${kind}.security`]}>
          {(p) => (
            <select {...p} className="input select" value={server.security} onChange={(e) => setSecurity(e.target.value as Security)}>
              {(['tls', 'starttls', 'none'] as const).map((s) => <option key={s} value={s}>{SECURITY_LABELS[s]}</option>)}
            </select>
          )}
        </Field>
        <Field label="Port" error={errors[`${kind}.port`]}>
          {(p) => <input {...p} className="input" inputMode="numeric" value={server.port} onChange={(e) => onChange({ port: e.target.value })} />}
        </Field>
      </div>
      <div className="form-row">
        <Field label="User" optional={kind === 'smtp'} error={errors[`${kind}.user`]}>
          {(p) => <input {...p} className="input" value={server.user} onChange={(e) => onChange({ user: e.target.value })}
            autoComplete="off" autoCapitalize="off" spellCheck={false} />}
        </Field>
        <PasswordField kind={kind} server={server} error={errors[`${kind}.password`]} onChange={onChange} />
      </div>
      {kind === 'imap' && (
        <Field label="Drafts folder" error={errors['imap.draftsFolder']} hint="Where “Save to mailbox” puts drafts.">
          {(p) => <input {...p} className="input" value={server.draftsFolder} onChange={(e) => onChange({ draftsFolder: e.target.value })} maxLength={200} placeholder="Drafts" />}
        </Field>
      )}
    </>
  );
}

/**
 * A saved password shows as saved, with "Change"; it is never sent back to the page. Changing the host, port, security
 * or user drops it (the server sends it nowhere else), so the field then asks for it again.
 */
function PasswordField({ kind, server, error, onChange }: { kind: 'smtp' | 'imap'; server: ServerForm; error?: string; onChange(change: Partial<ServerForm>): void }) {
  if (server.passwordSet && server.password === null && !keepsSavedPassword(server)) {
    return (
      <Field label="Password" optional={kind === 'smtp'} error={error}
        hint={`The saved password is dropped: ${DROPPED} Enter it again.`}>
        {(p) => <input {...p} className="input" type="password" value="" autoComplete="new-password"
          onChange={(e) => onChange({ password: e.target.value })} />}
      </Field>
    );
  }
  if (server.passwordSet && server.password === null) {
    return (
      <Field label="Password" error={error} hint="Changing the server, security, port or user drops it.">
        {(p) => (
          <div className="saved-secret">
            <span className="saved-secret-text"><span aria-hidden="true">••••</span> saved</span>
            <Button size="small" id={p.id} aria-describedby={p['aria-describedby']} onClick={() => onChange({ password: '' })}
              aria-label={`Change the saved ${kind.toUpperCase()} password`}>Change</Button>
          </div>
        )}
      </Field>
    );
  }
  return (
    <Field label="Password" optional={kind === 'smtp'} error={error}
      hint={server.passwordSet ? <>A new password replaces the saved one. <button type="button" className="link-button" onClick={() => onChange({ password: null })}>Keep the saved one</button></> : 'Stored encrypted, never shown again.'}>
      {(p) => <input {...p} className="input" type="password" value={server.password ?? ''} onChange={(e) => onChange({ password: e.target.value })} autoComplete="new-password" />}
    </Field>
  );
}

/**
 * What a connection check is given: the form's values, the user and password only when typed (a password left out
 * is the saved one).
 */
function checkBody(server: ServerForm, kind: 'smtp' | 'imap') {
  const { user, password, draftsFolder, ...rest } = serverBody(server, kind);
  return { ...rest, ...(user ? { user } : {}), ...(password ? { password } : {}), ...(draftsFolder ? { draftsFolder } : {}) };
}

/** Tries the server with the form's values as they stand, saved or not. */
function ConnectionCheck({ kind, server }: { kind: 'smtp' | 'imap'; server: ServerForm }) {
  const [state, setState] = useState<{ busy: boolean; result: CheckResult | null }>({ busy: false, result: null });
  // A result is about the values it was made with: a change makes it stale.
  const key = JSON.stringify(serverBody(server, kind));
  useEffect(() => setState((s) => (s.result ? { busy: false, result: null } : s)), [key]);
  const run = async () => {
    setState({ busy: true, result: null });
    try {
      const { body } = await postUntyped(`/ui/api/settings/email/check-${kind}`, { body: checkBody(server, kind) });
      setState({ busy: false, result: body });
    } catch (error) {
      setState({ busy: false, result: { ok: false, error: error instanceof Error ? error.message : 'The check failed.' } });
    }
  };
  return (
    <div className="mail-check" aria-live="polite">
      <Button icon="refresh" busy={state.busy} onClick={() => void run()} disabled={!server.host.trim()}>Check connection</Button>
      {state.result?.ok === true && <Badge tone="green" dot>Connected</Badge>}
      {state.result?.ok === false && <Alert tone="error" title="The connection failed">{state.result.error}</Alert>}
    </div>
  );
}

/** Sends a test e-mail to the signed-in admin with the saved settings. */
function TestEmail({ to, disabled, why }: { to: string | null; disabled: boolean; why: string | null }) {
  const [state, setState] = useState<{ busy: boolean; result: CheckResult | null }>({ busy: false, result: null });
  const run = async () => {
    setState({ busy: true, result: null });
    try {
      const { body } = await postUntyped('/ui/api/settings/email/send-test', { body: {} });
      setState({ busy: false, result: body });
    } catch (error) {
      setState({ busy: false, result: { ok: false, error: error instanceof Error ? error.message : 'The test e-mail was not sent.' } });
    }
  };
  return (
    <div className="mail-check" aria-live="polite">
      <Button icon="mail" busy={state.busy} disabled={disabled} onClick={() => void run()}>Send test e-mail</Button>
      {why ? <span className="small muted">{why}</span> : to && <span className="small muted">To {to}</span>}
      {state.result?.ok === true && <Alert tone="success" title="Sent">The test e-mail was accepted{to ? ` for ${to}` : ''}. Check the inbox.</Alert>}
      {state.result?.ok === false && <Alert tone="error" title="The test e-mail was not sent">{state.result.error}</Alert>}
    </div>
  );
}
