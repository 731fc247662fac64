// When an approval that delivers sends its e-mail (DESIGN §14): now (the default), in the next send window, or at a
// time the person picks. The picked local time is sent as an RFC 3339 instant, read in the browser's time zone, so
// "09:00" means nine o'clock where the person sits.
import { useState } from 'react';

type When = 'now' | 'next_window' | 'at';

/** The approval's `sendAt`: undefined to send now, `next_window`, an instant; null while "At…" has no time yet. */
export type SendAt = string | undefined | null;

/** The instant a datetime-local value names in the browser's time zone, or null for none or an impossible one. */
export function instantOfLocal(local: string): string | null {
  if (!local) return null;
  const at = new Date(local);
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}

export function SendTimePicker({ onChange, disabled }: { onChange(next: SendAt): void; disabled?: boolean }) {
  const [when, setWhen] = useState<When>('now');
  const [local, setLocal] = useState('');
  const report = (nextWhen: When, nextLocal: string) => {
    setWhen(nextWhen);
    setLocal(nextLocal);
    onChange(nextWhen === 'now' ? undefined : nextWhen === 'next_window' ? 'next_window' : instantOfLocal(nextLocal));
  };
  return (
    <span className="send-time-picker small">
      <label>
        <span className="muted">Send </span>
        <select className="input input-small" value={when} disabled={disabled} aria-label="When to send"
          onChange={(e) => report(e.target.value as When, local)}>
          <option value="now">Now</option>
          <option value="next_window">In the next send window</option>
          <option value="at">At…</option>
        </select>
      </label>
      {when === 'at' && (
        <input type="datetime-local" className="input input-small" value={local} disabled={disabled} aria-label="Send at"
          onChange={(e) => report('at', e.target.value)} />
      )}
    </span>
  );
}
