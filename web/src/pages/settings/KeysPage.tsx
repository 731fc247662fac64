// Settings / API keys (admins only): the workspace's keys with who made them and when they were last used;
// create one (its plaintext is shown once, here), revoke one.
import { useState } from 'react';
import { api, ApiError } from '../../api/client';
import { SCOPES, type ApiKey, type CreatedApiKey, type Scope } from '../../api/types';
import { Dialog } from '../../components/Dialog';
import { FormDialog } from '../../components/FormDialog';
import { Icon } from '../../components/Icon';
import { useToast } from '../../components/Toast';
import { Alert, Badge, Button, CopyButton, EmptyState, ErrorAlert, Field, LoadingBlock, RelativeTime } from '../../components/ui';
import { useDialogForm } from '../../lib/dialogForm';
import { displayName, formatDateTime } from '../../lib/format';
import { useApiQuery } from '../../lib/query';
import { AdminOnly } from './AdminOnly';

const SCOPE_HELP: Record<Scope, string> = {
  'leads:read': 'List and read leads and their calls.',
  'leads:write': 'Create and update leads, add calls. Does not grant reading.',
  'runs:read': 'Read runs, their steps, events and drafts.',
  'runs:write': 'Start runs; approve, reject or cancel them.',
  'webhooks:read': 'List webhook endpoints and their delivery logs.',
  'webhooks:write': 'Add, change and remove webhook endpoints; send test events, replay deliveries, roll secrets.',
  'sequences:read': 'List and read follow-up sequences.',
  'sequences:write': 'Make, change and delete follow-up sequences.',
};

/** Admins only: the header and the guard are the route's (AdminGate). */
export function KeysPage() {
  const toast = useToast();
  const keys = useApiQuery(['keys'], (signal) => api.get('/ui/api/keys', { signal }).then((r) => r.body.data));
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);


  if (keys.error instanceof ApiError && keys.error.status === 403) return <AdminOnly what="API keys" />;
  const active = keys.data?.filter((k) => k.state === 'active') ?? [];
  const revoked = keys.data?.filter((k) => k.state === 'revoked') ?? [];

  return (
    <>
      <div className="section-bar">
        <p className="section-bar-text">{keys.data ? `${active.length} active key${active.length === 1 ? '' : 's'}${revoked.length ? `, ${revoked.length} revoked` : ''}` : ''}</p>
        <div className="section-bar-actions">
          <Button icon="refresh" size="small" variant="ghost" busy={keys.loading && Boolean(keys.data)} onClick={() => void keys.reload()}>Refresh</Button>
          <Button variant="primary" icon="plus" onClick={() => setCreating(true)}>Create key</Button>
        </div>
      </div>
      {keys.error ? <ErrorAlert error={keys.error} retry={keys.reload} /> : null}
      {!keys.data && !keys.error && <LoadingBlock label="Loading keys" />}
      {keys.data?.length === 0 && (
        <EmptyState icon="key" title="No API keys yet" action={<Button variant="primary" icon="plus" onClick={() => setCreating(true)}>Create your first key</Button>}>
          Create a key to push leads from your CRM or start runs from your own tools.
        </EmptyState>
      )}
      {keys.data && keys.data.length > 0 && (
        <div className="table-card">
          <div className="table-scroll">
            <table className="table table-stack">
              <caption className="visually-hidden">API keys</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created by</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">State</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {[...active, ...revoked].map((key) => (
                  <tr key={key.id} className={key.state === 'revoked' ? 'row-dim' : undefined} data-key-id={key.id}>
                    <th scope="row" className="row-title-cell cell-main">{key.name}</th>
                    <td><code className="key-prefix">{key.prefix}…</code></td>
                    <td><span className="chips">{key.scopes.map((s) => <span key={s} className="chip">{s}</span>)}</span></td>
                    <td data-label="Created by">{key.createdBy
                      ? <span title={key.createdBy.email ?? undefined}>{displayName(key.createdBy)}{key.createdBy.removed && <span className="removed-tag"> (removed member)</span>}</span>
                      : <span className="muted">Command line</span>}</td>
                    <td className="nowrap" data-label="Created"><RelativeTime iso={key.createdAt} /></td>
                    <td className="nowrap" data-col="last-used" data-label="Last used"><RelativeTime iso={key.lastUsedAt} fallback="Never" /></td>
                    <td>
                      {key.state === 'active'
                        ? <Badge tone="green" dot>Active</Badge>
                        : <span title={key.revokedAt ? `Revoked ${formatDateTime(key.revokedAt)}` : undefined}><Badge tone="gray">Revoked</Badge></span>}
                    </td>
                    <td className="align-right cell-end">
                      {key.state === 'active' && (
                        <Button size="small" variant="ghost" className="danger-text" onClick={() => setRevoking(key)} aria-label={`Revoke ${key.name}`}>Revoke</Button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}

      {creating && (
        <CreateKeyDialog
          onClose={() => setCreating(false)}
          onCreated={(key) => keys.set((list) => [key, ...(list ?? [])])}
        />
      )}
      {revoking && (
        <RevokeDialog
          apiKey={revoking}
          onClose={() => setRevoking(null)}
          onRevoked={(key) => {
            setRevoking(null);
            keys.set((list) => (list ?? []).map((k) => (k.id === key.id ? key : k)));
            toast(`“${key.name}” was revoked. Requests with it are refused from now on.`);
          }}
        />
      )}
    </>
  );
}

const KEY_FIELDS = ['name', 'scopes'] as const;

interface KeyValues {
  name: string;
  scopes: Scope[];
}

function checkKey(values: KeyValues): Partial<Record<keyof KeyValues, string>> {
  const local: Partial<Record<keyof KeyValues, string>> = {};
  if (!values.name.trim()) local.name = 'Name the key after what will use it, e.g. “HubSpot sync”.';
  if (values.scopes.length === 0) local.scopes = 'Choose at least one scope.';
  return local;
}

function CreateKeyDialog({ onClose, onCreated }: { onClose(): void; onCreated(key: ApiKey): void }) {
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const form = useDialogForm<KeyValues>({
    defaultValues: { name: '', scopes: ['leads:read', 'runs:read'] },
    known: KEY_FIELDS,
    check: checkKey,
    send: async (values) => {
      const { body } = await api.post('/ui/api/keys', { body: { name: values.name.trim(), scopes: values.scopes } });
      setCreated(body);
      const { key: _plaintext, ...listed } = body;
      onCreated(listed);
    },
  });

  if (created) {
    return (
      <Dialog title="Your new API key" onClose={onClose} footer={<Button variant="primary" onClick={onClose}>I have stored it</Button>}>
        <Alert tone="warning" title="Copy this key now">
          This is the only time it is shown. leadrun keeps only a fingerprint of it; if it is lost, revoke it and create another.
        </Alert>
        <div className="secret">
          <label htmlFor="new-key" className="field-label">{created.name}</label>
          <div className="secret-row">
            <input id="new-key" className="input mono secret-input" readOnly value={created.key} onFocus={(e) => e.currentTarget.select()} />
            <CopyButton text={created.key} size="medium" />
          </div>
          <p className="field-hint">Scopes: {created.scopes.join(', ')}</p>
        </div>
        <p className="small muted">Try it:</p>
        <pre className="code-block">{`curl ${window.location.origin}/api/v1/leads \\\n  -H "Authorization: Bearer ${created.key}"`}</pre>
      </Dialog>
    );
  }

  const scopesError = form.fieldError('scopes');
  return (
    <FormDialog title="Create an API key" description="Give it a name you will recognise later, and only the scopes it needs."
      submitLabel="Create key" onClose={onClose} form={form}>
        <Field label="Name" error={form.fieldError('name')} hint="For example “HubSpot sync” or “Zapier”.">
          {(p) => <input {...p} {...form.register('name')} className="input" autoComplete="off" autoFocus maxLength={200} />}
        </Field>
        <fieldset className="fieldset" aria-describedby={scopesError ? 'scope-error' : undefined} aria-invalid={scopesError ? true : undefined}>
          <legend className="field-label">Scopes</legend>
          <div className="checkbox-list">
            {SCOPES.map((scope) => (
              <label key={scope} className="checkbox">
                <input type="checkbox" value={scope} {...form.register('scopes')} aria-invalid={scopesError ? true : undefined} />
                <span>
                  <code className="scope-name">{scope}</code>
                  <span className="checkbox-help">{SCOPE_HELP[scope]}</span>
                </span>
              </label>
            ))}
          </div>
          {scopesError && <p id="scope-error" className="field-error"><Icon name="alert" size={14} />{scopesError}</p>}
        </fieldset>
    </FormDialog>
  );
}

function RevokeDialog({ apiKey, onClose, onRevoked }: { apiKey: ApiKey; onClose(): void; onRevoked(key: ApiKey): void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const revoke = async () => {
    setBusy(true);
    setError(null);
    try {
      const { body } = await api.post('/ui/api/keys/{id}/revoke', { params: { id: apiKey.id } });
      onRevoked(body);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <Dialog
      title={`Revoke “${apiKey.name}”?`}
      size="small"
      onClose={onClose}
      busy={busy}
      footer={<>
        <Button onClick={onClose} disabled={busy} autoFocus>Keep key</Button>
        <Button variant="danger" busy={busy} onClick={() => void revoke()}>Revoke key</Button>
      </>}
    >
      {error ? <ErrorAlert error={error} /> : null}
      <p>Anything using <code className="key-prefix">{apiKey.prefix}…</code> stops working at once. This cannot be undone.</p>
    </Dialog>
  );
}
