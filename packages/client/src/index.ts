// @leadrun/client: the typed client of the leadrun API. See README.md.
export { createClient, RUN_AT_REST } from './client.ts';
export type {
  Call, CallCreate, CallListParams, ClientOptions, DraftEdit, DraftVersion, IdempotentControl, Lead, LeadCreate, LeadFilters,
  LeadImportFile, LeadImportOptions, LeadImportResult, LeadListParams, LeadrunClient, LeadUpdate, Page, QueryOf,
  RequestBody,
  RequestControl, ResponseBody, Run, RunApprove, RunBatchItem, RunCreate, RunEvent, RunEventsOptions, RunListParams,
  RunReject, RunStatus,
  WaitOptions, WebhookDelivery, WebhookDeliveryListParams, WebhookEndpoint, WebhookEndpointCreate, WebhookEndpointUpdate,
  WebhookEndpointWithSecret,
} from './client.ts';
export { LeadrunError, LeadrunTimeoutError, WebhookVerificationError, type Problem, type WebhookVerificationReason } from './errors.ts';
export { readEventStream, type ServerSentEvent } from './sse.ts';
export type { FetchLike } from './transport.ts';
export { verifyWebhook, type VerifyOptions, type WebhookEvent, type WebhookEventType, type WebhookHeaders } from './webhooks.ts';
export type { components, operations, paths, webhooks } from './schema.js';
