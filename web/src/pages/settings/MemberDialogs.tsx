// What an admin does to one member, each in a dialog that says what will happen: change their role, make a
// one-time link to set a new password, remove them.
import { useState } from 'react';
import { api, ApiError } from '../../api/client';
import type { Member, RemovedMember, ResetLink } from '../../api/types';
import { Dialog } from '../../components/Dialog';
import { Alert, Button, CopyButton, ErrorAlert, LoadingBlock } from '../../components/ui';
import { displayName, formatDateTime } from '../../lib/format';
import { useSession, useSignedIn } from '../../lib/session';
import { useApiQuery } from '../../lib/query';

/** Runs an action with the dialog busy, keeping its error to show. */
function useAction<T>(action: () => Promise<T>, done: (value: T) => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      const value = await action();
      setBusy(false);
      done(value);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return { busy, error, run };
}

export function RoleDialog({ member, onClose, onChanged }: { member: Member; onClose(): void; onChanged(member: Member): void }) {
  const session = useSignedIn();
  const { signedIn } = useSession();
  const role = member.role === 'ADMIN' ? 'MEMBER' : 'ADMIN';
  const self = member.id === session.user.id;
  const name = displayName(member);
  const { busy, error, run } = useAction(async () => {
    const { body } = await api.patch('/ui/api/members/{id}', { params: { id: member.id }, body: { role } });
    // Your own role: the pages you may see change with it.
    if (self) signedIn((await api.get('/ui/api/session')).body);
    return body;
  }, onChanged);
  const lastAdmin = error instanceof ApiError && error.status === 409;
  return (
    <Dialog
      title={role === 'ADMIN' ? `Make ${name} an admin?` : `Make ${self ? 'yourself' : name} a member?`}
      size="small"
      onClose={onClose}
      busy={busy}
      footer={<>
        <Button onClick={onClose} disabled={busy} autoFocus>Cancel</Button>
        <Button variant="primary" busy={busy} onClick={() => void run()} disabled={lastAdmin}>{role === 'ADMIN' ? 'Make admin' : 'Make member'}</Button>
      </>}
    >
      {lastAdmin
        ? <Alert tone="warning" title="The workspace needs an admin">{(error as ApiError).detail}</Alert>
        : error ? <ErrorAlert error={error} /> : null}
      {role === 'ADMIN'
        ? <p>{name} will manage API keys and members and read the audit log, as you do.</p>
        : <p>{self ? 'You' : name} will keep working on leads, calls and runs, but no longer manage API keys or members, or read the audit log.</p>}
      <p className="small muted">The change takes effect on {self ? 'your' : 'their'} next request; nobody is signed out.</p>
    </Dialog>
  );
}

export function ResetLinkDialog({ member, onClose }: { member: Member; onClose(): void }) {
  const name = displayName(member);
  const [link, setLink] = useState<ResetLink | null>(null);
  const { busy, error, run } = useAction(
    async () => (await api.post('/ui/api/members/{id}/password-reset', { params: { id: member.id }, body: {} })).body,
    setLink,
  );

  if (link) {
    return (
      <Dialog title={`A password link for ${name}`} onClose={onClose} footer={<Button variant="primary" onClick={onClose}>Done</Button>}>
        <Alert tone="warning" title="Copy the link now">
          This is the only time it is shown. Send it to {name} privately: whoever opens it can set the password.
        </Alert>
        <div className="secret">
          <label htmlFor="reset-link" className="field-label">One-time link</label>
          <div className="secret-row">
            <input id="reset-link" className="input mono secret-input" readOnly value={link.url} onFocus={(e) => e.currentTarget.select()} />
            <CopyButton text={link.url} size="medium" />
          </div>
          <p className="field-hint">
            Works once, until {formatDateTime(link.expiresAt)}. {link.emailed
              ? `It was e-mailed to ${member.email}.`
              : link.emailError
                ? `It could not be e-mailed (${link.emailError.replace(/\.$/, '')}): give it to ${member.name ?? 'them'} yourself.`
                : 'Give it to them yourself: this workspace cannot send e-mail (Settings / E-mail).'}
          </p>
        </div>
      </Dialog>
    );
  }
  return (
    <Dialog
      title={`Reset the password of ${name}?`}
      size="small"
      onClose={onClose}
      busy={busy}
      footer={<>
        <Button onClick={onClose} disabled={busy} autoFocus>Cancel</Button>
        <Button variant="primary" busy={busy} onClick={() => void run()}>Create link</Button>
      </>}
    >
      {error ? <ErrorAlert error={error} /> : null}
      <p>You get a one-time link for {name} to set a new password. It works for 24 hours; a newer link replaces it.</p>
      <p className="small muted">Their current password keeps working until they use the link. Using it signs them out everywhere.</p>
    </Dialog>
  );
}

export function RemoveMemberDialog({ member, onClose, onRemoved }: { member: Member; onClose(): void; onRemoved(removed: RemovedMember): void }) {
  const session = useSignedIn();
  const { signOut } = useSession();
  const self = member.id === session.user.id;
  const name = displayName(member);
  const keys = useApiQuery(['keys'], (signal) => api.get('/ui/api/keys', { signal }).then((r) => r.body.data));
  const theirKeys = keys.data?.filter((k) => k.state === 'active' && k.createdBy?.id === member.id) ?? [];
  // Revoking is the safe default: each key was shown to its creator, who may keep a copy. Unticked, the keys keep
  // working for whatever depends on them, and are listed as made by a removed member.
  const [revokeKeys, setRevokeKeys] = useState(true);
  const { busy, error, run } = useAction(async () => {
    const { body } = await api.post('/ui/api/members/{id}/remove', { params: { id: member.id }, body: { revokeKeys: revokeKeys && theirKeys.length > 0 } });
    return body;
  }, (removed) => {
    if (self) void signOut();
    else onRemoved(removed);
  });
  const lastAdmin = error instanceof ApiError && error.status === 409;

  return (
    <Dialog
      title={self ? 'Remove yourself from the workspace?' : `Remove ${name}?`}
      onClose={onClose}
      busy={busy}
      footer={<>
        <Button onClick={onClose} disabled={busy} autoFocus>Cancel</Button>
        <Button variant="danger" busy={busy} disabled={!keys.data && !keys.error} onClick={() => void run()}>{self ? 'Remove myself' : `Remove ${name}`}</Button>
      </>}
    >
      {lastAdmin
        ? <Alert tone="warning" title="The workspace needs an admin">{(error as ApiError).detail}</Alert>
        : error ? <ErrorAlert error={error} /> : null}
      {self && <Alert tone="warning">You will be signed out at once and cannot sign in to this workspace again.</Alert>}
      <ul className="consequences">
        <li>{self ? 'You are' : `${name} is`} signed out everywhere at once, and cannot sign in again.</li>
        <li>Leads assigned to {self ? 'you' : 'them'} become unassigned.</li>
        <li>The audit log keeps {self ? 'your' : 'their'} name. {member.email ? `${member.email} is free for a new member.` : ''}</li>
      </ul>
      {!keys.data && !keys.error && <LoadingBlock label="Checking their API keys" />}
      {keys.error ? <ErrorAlert error={keys.error} retry={keys.reload} /> : null}
      {theirKeys.length > 0 && (
        <label className="checkbox">
          <input type="checkbox" checked={revokeKeys} onChange={(e) => setRevokeKeys(e.target.checked)} />
          <span>
            <strong>Also revoke the {theirKeys.length === 1 ? 'API key' : `${theirKeys.length} API keys`} {self ? 'you' : 'they'} created</strong>
            <span className="checkbox-help">
              {theirKeys.map((k) => `“${k.name}”`).join(', ')}. {self ? 'You' : 'They'} saw each key when it was made and may have kept a copy.
              Untick to keep {theirKeys.length === 1 ? 'it' : 'them'} working for the tools that use {theirKeys.length === 1 ? 'it' : 'them'}.
            </span>
          </span>
        </label>
      )}
    </Dialog>
  );
}
