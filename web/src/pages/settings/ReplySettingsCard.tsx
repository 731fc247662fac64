// Settings / E-mail: what replies do (DESIGN §16). An interested reply moves a CONTACTED lead to QUALIFIED unless an
// admin turns it off here; a change is saved as it is made.
import { useState } from 'react';
import { api, ApiError } from '../../api/client';
import { useToast } from '../../components/Toast';
import { Card } from '../../components/ui';
import { useApiQuery } from '../../lib/query';

export function ReplySettingsCard() {
  const toast = useToast();
  const settings = useApiQuery(['reply-settings'], async (signal) => (await api.get('/ui/api/reply-settings', { signal })).body);
  const [busy, setBusy] = useState(false);
  if (!settings.data) return null;
  const change = async (qualifyOnInterest: boolean) => {
    setBusy(true);
    try {
      await api.patch('/ui/api/reply-settings', { body: { qualifyOnInterest } });
      await settings.reload();
      toast(qualifyOnInterest ? 'Interested replies now qualify their lead.' : 'Interested replies no longer change the lead\'s status.');
    } catch (error) {
      toast(error instanceof ApiError ? error.detail : 'The setting could not be saved.', 'error');
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card title="Replies" titleId="mail-replies">
      <label className="checkbox-row">
        <input type="checkbox" checked={settings.data.qualifyOnInterest} disabled={busy} onChange={(event) => void change(event.target.checked)} />
        <span>Move a contacted lead to <strong>Qualified</strong> when they reply with interest</span>
      </label>
      <p className="muted small">Replies also stop a lead&apos;s follow-ups, pause them while the person is away, and take an address that asks to stop off the list.</p>
    </Card>
  );
}
