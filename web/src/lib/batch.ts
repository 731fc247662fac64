// Many runs at once. `startBatch` posts one batch (POST /api/v1/runs/batch: 1 to 100 runs, all or none) and opens
// its progress page; any page that lets a person pick leads calls it, through `useStartBatch` for the navigation.
import { useNavigate } from '@tanstack/react-router';
import { useCallback } from 'react';
import { api, type RequestOf, type ResponseOf } from '../api/client';
import type { Run } from '../api/types';

export type BatchItem = RequestOf<'post', '/api/v1/runs/batch'>['runs'][number];
export type BatchRun = ResponseOf<'get', '/ui/api/batches/{id}'>['data'][number];

/** The most runs one batch may hold; the server refuses more with a 400. */
export const MAX_BATCH_RUNS = 100;

/**
 * Starts a run for each item and shows the batch. Resolves to the runs, in the items' order; rejects with the
 * server's ApiError (400 or 404 naming `runs[i].…`, 402 when the month cannot hold them all) and then starts none.
 */
export async function startBatch(items: readonly BatchItem[], showBatch: (batchId: string) => void): Promise<Run[]> {
  const { body } = await api.post('/api/v1/runs/batch', { body: { runs: [...items] } });
  const batchId = body.data[0]?.batchId;
  if (batchId) showBatch(batchId);
  return body.data;
}

/** `startBatch` bound to the router: `const start = useStartBatch(); await start(items)`. */
export function useStartBatch(): (items: readonly BatchItem[]) => Promise<Run[]> {
  const navigate = useNavigate();
  return useCallback((items) => startBatch(items, (id) => void navigate({ to: '/runs/batches/$id', params: { id } })), [navigate]);
}

/** The five groups the batch page counts, each run in exactly one. */
export type BatchGroup = 'QUEUED' | 'RUNNING' | 'AWAITING_APPROVAL' | 'FAILED' | 'DONE';

export function groupOf(status: Run['status']): BatchGroup {
  return status === 'COMPLETED' || status === 'REJECTED' || status === 'CANCELLED' ? 'DONE' : status;
}

/** Whether a run of the batch is still in the pipeline (the page keeps reading the batch while one is). */
export function inPipeline(status: Run['status']): boolean {
  return status === 'QUEUED' || status === 'RUNNING';
}
