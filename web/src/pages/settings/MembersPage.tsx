// Settings / Members: everyone who can sign in to this workspace. Admins add people as ADMIN or MEMBER, change
// their role, make them a one-time link to set a new password, and remove them.
import { useState } from 'react';
import { api } from '../../api/client';
import type { Member, Role } from '../../api/types';
import { FormDialog } from '../../components/FormDialog';
import { useToast } from '../../components/Toast';
import { Avatar, Badge, Button, ErrorAlert, Field, LoadingBlock, PageHeader, RelativeTime } from '../../components/ui';
import { displayName } from '../../lib/format';
import { loadMembers } from '../../lib/members';
import { useDialogForm } from '../../lib/dialogForm';
import { isEmail } from '../../lib/forms';
import { useSignedIn } from '../../lib/session';
import { useApiQuery, useTitle } from '../../lib/query';
import { RemoveMemberDialog, ResetLinkDialog, RoleDialog } from './MemberDialogs';

type Acting = { kind: 'role' | 'reset' | 'remove'; member: Member };

export function MembersPage() {
  useTitle('Members');
  const session = useSignedIn();
  const toast = useToast();
  const isAdmin = session.user.role === 'ADMIN';
  const members = useApiQuery(['members'], loadMembers);
  const [adding, setAdding] = useState(false);
  const [acting, setActing] = useState<Acting | null>(null);

  return (
    <>
      <PageHeader
        eyebrow="Settings"
        title="Members"
        description={isAdmin ? 'The people who can sign in to this workspace. Admins also manage API keys, members and the audit log.' : 'The people who can sign in to this workspace. Ask an admin to add someone.'}
        actions={isAdmin ? <Button variant="primary" icon="plus" onClick={() => setAdding(true)}>Add member</Button> : undefined}
      />
      {members.error ? <ErrorAlert error={members.error} retry={members.reload} /> : null}
      {!members.data && !members.error && <LoadingBlock label="Loading members" />}
      {members.data && (
        <div className="table-card">
          <div className="table-scroll">
            <table className="table table-stack">
              <caption className="visually-hidden">Members of {session.workspace.name}</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col" className="align-right">Joined</th>
                  {isAdmin && <th scope="col"><span className="visually-hidden">Actions</span></th>}
                </tr>
              </thead>
              <tbody>
                {members.data.map((m) => (
                  <tr key={m.id}>
                    <th scope="row" className="row-title-cell cell-main">
                      <span className="person">
                        <Avatar name={displayName(m)} />
                        <span>{displayName(m)}{m.id === session.user.id && <span className="you"> (you)</span>}</span>
                      </span>
                    </th>
                    <td>{m.email ?? <span className="muted">—</span>}</td>
                    <td><Badge tone={m.role === 'ADMIN' ? 'violet' : 'neutral'}>{m.role === 'ADMIN' ? 'Admin' : 'Member'}</Badge></td>
                    <td className="align-right nowrap muted" data-label="Joined"><RelativeTime iso={m.createdAt} /></td>
                    {isAdmin && (
                      <td className="align-right nowrap">
                        <span className="row-actions">
                          <Button size="small" variant="ghost" onClick={() => setActing({ kind: 'role', member: m })}
                            aria-label={`Make ${displayName(m)} ${m.role === 'ADMIN' ? 'a member' : 'an admin'}`}>
                            {m.role === 'ADMIN' ? 'Make member' : 'Make admin'}
                          </Button>
                          <Button size="small" variant="ghost" onClick={() => setActing({ kind: 'reset', member: m })} aria-label={`Reset the password of ${displayName(m)}`}>
                            Reset password
                          </Button>
                          <Button size="small" variant="ghost" className="danger-text" onClick={() => setActing({ kind: 'remove', member: m })} aria-label={`Remove ${displayName(m)}`}>
                            Remove
                          </Button>
                        </span>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}
      {acting?.kind === 'role' && (
        <RoleDialog
          member={acting.member}
          onClose={() => setActing(null)}
          onChanged={(member) => {
            setActing(null);
            members.set((list) => (list ?? []).map((m) => (m.id === member.id ? member : m)));
            toast(`${displayName(member)} is ${member.role === 'ADMIN' ? 'an admin' : 'a member'} now.`);
          }}
        />
      )}
      {acting?.kind === 'reset' && <ResetLinkDialog member={acting.member} onClose={() => setActing(null)} />}
      {acting?.kind === 'remove' && (
        <RemoveMemberDialog
          member={acting.member}
          onClose={() => setActing(null)}
          onRemoved={(removed) => {
            setActing(null);
            members.set((list) => (list ?? []).filter((m) => m.id !== removed.id));
            const parts = [`signed out of ${removed.endedSessions} session${removed.endedSessions === 1 ? '' : 's'}`];
            if (removed.unassignedLeads) parts.push(`${removed.unassignedLeads} lead${removed.unassignedLeads === 1 ? '' : 's'} unassigned`);
            if (removed.revokedKeys) parts.push(`${removed.revokedKeys} API key${removed.revokedKeys === 1 ? '' : 's'} revoked`);
            toast(`${displayName(removed)} was removed: ${parts.join(', ')}.`);
          }}
        />
      )}
      {adding && (
        <AddMemberDialog
          onClose={() => setAdding(false)}
          onAdded={(member) => {
            setAdding(false);
            members.set((list) => [...(list ?? []), member]);
            toast(`${displayName(member)} can now sign in as ${member.role === 'ADMIN' ? 'an admin' : 'a member'}.`);
          }}
        />
      )}
    </>
  );
}

const MEMBER_FIELDS = ['name', 'email', 'role', 'password'] as const;

interface MemberValues {
  name: string;
  email: string;
  role: Role;
  password: string;
}

function checkMember(values: MemberValues): Partial<Record<keyof MemberValues, string>> {
  const local: Partial<Record<keyof MemberValues, string>> = {};
  if (!values.name.trim()) local.name = 'Enter their name.';
  if (!isEmail(values.email.trim())) local.email = 'Enter an e-mail address like name@company.com.';
  if (values.password.length < 10) local.password = 'Use at least 10 characters.';
  return local;
}

function AddMemberDialog({ onClose, onAdded }: { onClose(): void; onAdded(member: Member): void }) {
  const form = useDialogForm<MemberValues>({
    defaultValues: { name: '', email: '', role: 'MEMBER', password: '' },
    known: MEMBER_FIELDS,
    check: checkMember,
    send: async (values) => {
      const { body } = await api.post('/ui/api/members', { body: { name: values.name.trim(), email: values.email.trim(), role: values.role, password: values.password } });
      onAdded(body);
    },
  });
  const { register, fieldError } = form;

  return (
    <FormDialog title="Add a member" description="They sign in with this e-mail and password. Share the password with them privately." onClose={onClose} submitLabel="Add member" form={form}>
        <div className="form-row">
          <Field label="Name" error={fieldError('name')}>
            {(p) => <input {...p} {...register('name')} className="input" autoComplete="off" autoFocus />}
          </Field>
          <Field label="E-mail" error={fieldError('email')}>
            {(p) => <input {...p} {...register('email')} className="input" type="email" autoComplete="off" />}
          </Field>
        </div>
        <fieldset className="fieldset">
          <legend className="field-label">Role</legend>
          <div className="radio-cards">
            {(['MEMBER', 'ADMIN'] as const).map((role) => (
              <label key={role} className="radio-card">
                <input type="radio" value={role} {...register('role')} />
                <span>
                  <strong>{role === 'ADMIN' ? 'Admin' : 'Member'}</strong>
                  <span className="checkbox-help">{role === 'ADMIN' ? 'Everything, including API keys, members and the audit log.' : 'Leads, calls, runs and drafts.'}</span>
                </span>
              </label>
            ))}
          </div>
          {fieldError('role') && <p className="field-error">{fieldError('role')}</p>}
        </fieldset>
        <Field label="Password" error={fieldError('password')} hint="At least 10 characters.">
          {(p) => <input {...p} {...register('password')} className="input" type="password" autoComplete="new-password" />}
        </Field>
    </FormDialog>
  );
}
