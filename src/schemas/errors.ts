// The closed list of error codes a problem document carries (src/domain/errors.ts raises them, src/http/problem.ts
// maps each to its status).
export const ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'run_limit_reached',
  'insufficient_scope',
  'forbidden',
  'not_found',
  'misdirected_request',
  'idempotency_conflict',
  'invalid_state',
  // A delivery asked for what the workspace has not set up (no SMTP server, no IMAP mailbox, no sender address): the
  // request is sound and the run's state allows it, but an admin must act first; apart from invalid_state so that a
  // client can tell "set up e-mail" from "the run moved on".
  'mail_not_configured',
  // Consent (DESIGN §15): the recipient's address or domain is on the suppression list (`reason` says why), or the
  // workspace's sender identity lacks what every e-mail must carry (`missing` names it).
  'recipient_suppressed',
  'sender_incomplete',
  'payload_too_large',
  'unsupported_media_type',
  'idempotency_key_reused',
  'rate_limited',
  'unavailable',
  'internal',
] as const;
