// Every read of the server goes through TanStack Query's cache: a page opened again shows what it showed at once while
// it is read anew, pages that read the same thing share it, and every change the server accepts (lib/../api/client.ts
// `onChange`) has what is on screen read again. `useApiQuery` gives pages the shape they use: the value, the error,
// whether a read is under way, a reload, and `set` for a change that answered the new value (an optimistic update).
import { keepPreviousData, QueryClient, useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { useCallback, useEffect } from 'react';
import { onChange } from '../api/client';

export function createQueryClient(): QueryClient {
  const client = new QueryClient({
    defaultOptions: {
      queries: {
        // A failed read says so at once, with a "Try again" (ErrorAlert): the person decides.
        retry: false,
        // While another page of a list (or another id) is read, the last answer stays on screen, never a blank.
        placeholderData: keepPreviousData,
        // Coming back to the tab reads what is on screen again (fresh "last used" times, new runs).
        refetchOnWindowFocus: true,
      },
    },
  });
  onChange(() => void client.invalidateQueries());
  return client;
}

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): Promise<void>;
  /** Replace the value without a request (after a change that answered the new value). */
  set(value: T | ((old: T | undefined) => T)): void;
}

export interface ReadOptions<T> {
  /** Read again this often (ms) while it says so, e.g. while a run is in the pipeline; a hidden tab waits. */
  refetchInterval?: number | false | ((data: T | undefined) => number | false);
  enabled?: boolean;
}

export function useApiQuery<T>(key: QueryKey, load: (signal: AbortSignal) => Promise<T>, options: ReadOptions<T> = {}): AsyncState<T> {
  const client = useQueryClient();
  const { refetchInterval } = options;
  const query = useQuery({
    queryKey: key,
    queryFn: ({ signal }) => load(signal),
    enabled: options.enabled,
    refetchInterval: typeof refetchInterval === 'function' ? (q) => refetchInterval(q.state.data as T | undefined) : refetchInterval,
  });
  const { refetch } = query;
  const reload = useCallback(async () => { await refetch(); }, [refetch]);
  const set = useCallback((value: T | ((old: T | undefined) => T)) => {
    client.setQueryData<T>(key, (old) => (typeof value === 'function' ? (value as (old: T | undefined) => T)(old) : value));
  }, [client, JSON.stringify(key)]); // eslint-disable-line react-hooks/exhaustive-deps
  return { data: query.data, error: query.error, loading: query.isFetching, reload, set };
}

/** Sets document.title for the page. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · leadrun` : 'leadrun';
  }, [title]);
}
