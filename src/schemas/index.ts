// The API's shapes. Each schema validates requests, serialises responses, types the handlers and writes the OpenAPI
// document: a shape is described once, in the file of its resource. TypeBox only: this layer imports nothing of the
// service (test/architecture.test.ts).
export * from './common.ts';
export * from './problem.ts';
export * from './leads.ts';
export * from './calls.ts';
export * from './runs.ts';
export * from './webhooks.ts';
export * from './replies.ts';
export * from './outbox.ts';
export * from './sequences.ts';
export * from './touches.ts';
export * from './suppressions.ts';
export * from './analytics.ts';
