// Which follow-ups an approval that delivers starts (DESIGN §13): the workspace's default preselected, another
// sequence, or none. `undefined` is the default (the API's own), `null` no follow-ups.
import { useSequences, waitsOf } from '../../lib/sequences';

export function SequencePicker({ value, onChange, disabled }: {
  value: string | null | undefined; onChange(next: string | null | undefined): void; disabled?: boolean;
}) {
  const sequences = useSequences();
  if (sequences.length === 0) return null;
  const selected = value === undefined ? sequences.find((s) => s.isDefault)?.id ?? '' : value ?? 'none';
  return (
    <label className="sequence-picker small">
      <span className="muted">Follow-ups </span>
      <select className="input input-small" value={selected} disabled={disabled} aria-label="Follow-ups after this e-mail"
        onChange={(e) => onChange(e.target.value === 'none' ? null : e.target.value)}>
        {sequences.map((s) => <option key={s.id} value={s.id}>{s.name} ({waitsOf(s)}){s.isDefault ? ' · default' : ''}</option>)}
        <option value="none">No follow-ups</option>
      </select>
    </label>
  );
}
