// The follow-up sequences an approval can enrol the lead in (DESIGN §13): read once per page, the default first.
import { useEffect, useState } from 'react';
import { api, type ResponseOf } from '../api/client';

export type SequenceOption = ResponseOf<'get', '/api/v1/sequences'>['data'][number];

/** The workspace's sequences, the default first; [] until known, and when they cannot be read. */
export function useSequences(): SequenceOption[] {
  const [sequences, setSequences] = useState<SequenceOption[]>([]);
  useEffect(() => {
    const controller = new AbortController();
    api.get('/api/v1/sequences', { signal: controller.signal })
      .then(({ body }) => setSequences([...body.data].sort((a, b) => Number(b.isDefault) - Number(a.isDefault))))
      .catch(() => { /* Without them, the approval enrols in the default, as the API does when none is named. */ });
    return () => controller.abort();
  }, []);
  return sequences;
}

/** "+3, +5 business days" */
export const waitsOf = (sequence: SequenceOption) => `${sequence.steps.map((s) => `+${s.waitDays}`).join(', ')} business days`;
