// What approving does with the e-mail (DESIGN §7): the choices the workspace's mail transport allows, and how a
// delivery's course reads. The choices come from /ui/api/settings/email/capabilities, asked once per page.
import { useCallback, useEffect, useState } from 'react';
import { api, ApiError, errorMessage, type ResponseOf } from '../api/client';
import { useToast } from '../components/Toast';
import { RUN_AT_REST, type EmailDraft, type Run } from '../api/types';

export type Capabilities = ResponseOf<'get', '/ui/api/settings/email/capabilities'>;
export type Deliver = Capabilities['defaultDeliver'];
export type Delivery = NonNullable<EmailDraft['delivery']>;

const NONE: Capabilities = { send: false, mailbox: false, defaultDeliver: 'none' };

/** The workspace's mail capabilities; `none` until known, and when they cannot be read. */
export function useMailCapabilities(): Capabilities {
  const [capabilities, setCapabilities] = useState<Capabilities>(NONE);
  useEffect(() => {
    const controller = new AbortController();
    api.get('/ui/api/settings/email/capabilities', { signal: controller.signal })
      .then(({ body }) => setCapabilities(body))
      .catch(() => { /* Without them, approving only approves: nothing is offered that may not work. */ });
    return () => controller.abort();
  }, []);
  return capabilities;
}

/** The approve choices to offer, the default first. */
export function approveChoices(capabilities: Capabilities): Deliver[] {
  const offered: Deliver[] = [...(capabilities.send ? ['send' as const] : []), ...(capabilities.mailbox ? ['mailbox' as const] : []), 'none'];
  const first = offered.includes(capabilities.defaultDeliver) ? capabilities.defaultDeliver : offered[0]!;
  return [first, ...offered.filter((choice) => choice !== first)];
}

export const APPROVE_LABEL: Record<Deliver, string> = {
  send: 'Approve and send',
  mailbox: 'Save to my mailbox',
  none: 'Approve only',
};

/** What a shortcut's approval does, said in full where the key is explained (the review queue's legend). */
export const APPROVE_KEY_LABEL: Record<Deliver, string> = {
  send: 'Approve and send',
  mailbox: 'Approve and save to my mailbox',
  none: 'Approve (nothing is sent)',
};

/**
 * Approves a draft through the web UI's own route, whose delivery waits a few seconds on the server
 * (src/http/ui/approvals.ts), and shows a toast with Undo for that long; `about` opens the toast ("Approved the
 * draft for Priya."). Undo takes the approval back and hands the run, awaiting approval again, to `onUndone`. The
 * wait is the server's, so closing the page during it still sends the e-mail when it ends, as approved.
 */
export function useApprove(): (
  runId: string, deliver: Deliver, about: string, onUndone: (run: Run) => void, sequenceId?: string | null, sendAt?: string,
) => Promise<Run> {
  const toast = useToast();
  return useCallback(async (runId, deliver, about, onUndone, sequenceId, sendAt) => {
    // `sequenceId` left out: the workspace's default sequence; null: no follow-ups (DESIGN §13).
    const { body } = await api.post('/ui/api/runs/{id}/approve', { params: { id: runId }, body: {
      deliver, ...(sequenceId !== undefined ? { sequenceId } : {}), ...(sendAt ? { sendAt } : {}),
    } });
    const run = body.data;
    const method = run.emailDraft?.delivery?.method;
    if (!method) {
      toast(`${about} It was not sent: copy it into your mail client, or send it from here later.`);
      return run;
    }
    // Held for a send window or a chosen time (DESIGN §14): it waits in the Outbox, where it can be sent or cancelled.
    const scheduledFor = run.emailDraft?.delivery?.scheduledFor;
    if (run.emailDraft?.delivery?.status === 'SCHEDULED' && scheduledFor) {
      toast(`${about} It waits in the Outbox until ${new Date(scheduledFor).toLocaleString()}.`);
      return run;
    }
    // An installation without the wait (APPROVAL_UNDO_SECONDS=0) delivers at once.
    if (body.undoMs === null) {
      toast(`${about} ${method === 'send' ? 'Sending it now.' : 'Saving it to your mailbox.'}`);
      return run;
    }
    const undo = () => {
      api.post('/ui/api/runs/{id}/undo-approval', { params: { id: runId }, body: {} }).then(
        ({ body: undone }) => {
          onUndone(undone.data);
          toast('Approval undone: nothing was sent, and the draft awaits approval again.', 'info');
        },
        (error: unknown) => toast(error instanceof ApiError && error.code === 'invalid_state'
          ? 'Too late to undo: the e-mail is already on its way.' : errorMessage(error), 'error'),
      );
    };
    const seconds = Math.max(1, Math.round(body.undoMs / 1000));
    const what = method === 'send' ? `Sending it in ${seconds} s.` : `Saving it to your mailbox in ${seconds} s.`;
    toast(`${about} ${what}`, 'success', { durationMs: body.undoMs, action: { label: 'Undo', onClick: undo } });
    return run;
  }, [toast]);
}

/** A delivery still under way: the run is worth following although it is at rest. */
export function deliveryUnderway(run: Run | undefined): boolean {
  const status = run?.emailDraft?.delivery?.status;
  return status === 'QUEUED' || status === 'DELIVERING';
}

/** Whether a run can change now only by someone's decision: at rest, with no delivery under way. */
export function runSettled(run: Run): boolean {
  return RUN_AT_REST.has(run.status) && !deliveryUnderway(run);
}
