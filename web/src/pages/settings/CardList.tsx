// An admin's list of things shown as cards (Settings / Webhooks, Settings / Sequences): a bar that counts them beside
// the page's buttons, then the list's error, its loading state, its empty state or one card (ListCard) for each, and the
// confirmation before one is deleted. `useToastOnFailure` runs a card's action, saying in a toast why it failed.
import type { ReactNode } from 'react';
import { ApiError } from '../../api/client';
import { Dialog } from '../../components/Dialog';
import { useToast } from '../../components/Toast';
import { Button, ErrorAlert, LoadingBlock } from '../../components/ui';
import type { AsyncState } from '../../lib/query';
import { AdminOnly } from './AdminOnly';

export function CardList<T extends { id: string }>({ list, noun, what, actions, empty, children }: {
  list: AsyncState<T[]>;
  /** What one is called, and many: ['endpoint', 'endpoints']. */
  noun: readonly [string, string];
  /** What a member, who may not see them, is told admins manage. */
  what: string;
  actions: ReactNode;
  /** The empty state (an EmptyState) when there are none. */
  empty: ReactNode;
  children(item: T): ReactNode;
}) {
  if (list.error instanceof ApiError && list.error.status === 403) return <AdminOnly what={what} />;
  const [one, many] = noun;
  return (
    <>
      <div className="section-bar">
        <p className="section-bar-text">{list.data ? `${list.data.length} ${list.data.length === 1 ? one : many}` : ''}</p>
        <div className="section-bar-actions">{actions}</div>
      </div>
      {list.error ? <ErrorAlert error={list.error} retry={list.reload} /> : null}
      {!list.data && !list.error && <LoadingBlock label={`Loading ${many}`} />}
      {list.data?.length === 0 && empty}
      {list.data?.map((item) => children(item))}
    </>
  );
}

/** One card of the list: what it is (`summary`) beside its buttons, then anything more (`children`). */
export function ListCard({ label, className, attributes, summary, actions, children }: {
  /** The card's accessible name. */
  label: string;
  className?: string;
  /** Data attributes naming the thing (`data-endpoint-id`), for tests and tools. */
  attributes: Record<`data-${string}`, string>;
  summary: ReactNode;
  actions: ReactNode;
  children?: ReactNode;
}) {
  return (
    <section className={className ? `card ${className}` : 'card'} {...attributes} aria-label={label}>
      <div className="card-body">
        <div className="section-bar">
          <div>{summary}</div>
          <div className="section-bar-actions">{actions}</div>
        </div>
        {children}
      </div>
    </section>
  );
}

/** Asks before one card's thing is deleted, saying what goes with it. */
export function ConfirmDelete({ title, confirm, onClose, onConfirm, children }: {
  title: string;
  /** The danger button's words: "Delete endpoint". */
  confirm: string;
  onClose(): void;
  onConfirm(): void;
  children: ReactNode;
}) {
  return (
    <Dialog title={title} size="small" onClose={onClose} footer={<>
      <Button onClick={onClose} autoFocus>Keep it</Button>
      <Button variant="danger" onClick={onConfirm}>{confirm}</Button>
    </>}>
      {children}
    </Dialog>
  );
}

/** Runs an action; when it fails, a toast says the server's reason, or "Could not <what>." */
export function useToastOnFailure(): (what: string, run: () => Promise<void>) => Promise<void> {
  const toast = useToast();
  return async (what, run) => {
    try {
      await run();
    } catch (error) {
      toast(error instanceof ApiError ? error.detail : `Could not ${what}.`);
    }
  };
}
