// What approving does with the e-mail (DESIGN §7): the choices the workspace's mail transport allows, and how a
// delivery's course reads. The choices come from /ui/api/settings/email/capabilities, asked once per page.
import { useEffect, useState } from 'react';
import { api, type ResponseOf } from '../api/client';
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

/** What the toast says once an approval has been answered: what will happen, not what the reader must do. */
export function approvedMessage(run: Run): string {
  const delivery = run.emailDraft?.delivery;
  if (!delivery) return 'Draft approved. It was not sent: copy it into your mail client, or send it from here later.';
  return delivery.method === 'send' ? 'Draft approved. Sending it now.' : 'Draft approved. Saving it to your mailbox.';
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
