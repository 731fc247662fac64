// Loading data for a page: the value, the error, and a reload that keeps the old value on screen meanwhile.
import { useCallback, useEffect, useRef, useState } from 'react';

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): Promise<void>;
  /** Replace the value without a request (after a mutation that answered the new value). */
  set(value: T | ((old: T | undefined) => T)): void;
}

export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): AsyncState<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const controller = useRef<AbortController | null>(null);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const run = useCallback(load, deps);

  const reload = useCallback(async () => {
    controller.current?.abort();
    const current = new AbortController();
    controller.current = current;
    setLoading(true);
    try {
      const value = await run(current.signal);
      if (current.signal.aborted) return;
      setData(value);
      setError(null);
    } catch (e) {
      if (current.signal.aborted || (e instanceof DOMException && e.name === 'AbortError')) return;
      setError(e);
    } finally {
      if (!current.signal.aborted) setLoading(false);
    }
  }, [run]);

  useEffect(() => {
    void reload();
    return () => controller.current?.abort();
  }, [reload]);

  const set = useCallback((value: T | ((old: T | undefined) => T)) => {
    setData((old) => (typeof value === 'function' ? (value as (old: T | undefined) => T)(old) : value));
  }, []);

  return { data, error, loading, reload, set };
}

/** Sets document.title for the page. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · leadrun` : 'leadrun';
  }, [title]);
}
