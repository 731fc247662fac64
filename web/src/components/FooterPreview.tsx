// The footer every e-mail carries while it is on (DESIGN §15), as src/mail/unsubscribe-headers.ts writes it, shown
// while someone types the company and postal address: on the setup page and in Settings / E-mail.

/** The footer's text: the company and its address on one line, then the line offering to stop (the link elided). */
export function footerText({ companyName, postalAddress }: { companyName: string; postalAddress: string }): string {
  const address = postalAddress.split(/\s*\n\s*/).filter(Boolean).join(', ') || '(no postal address yet)';
  return `${companyName.trim() || 'Your workspace'}, ${address}\n`
    + `If you would rather not hear from us again, reply "stop" or unsubscribe here: ${location.origin}/unsubscribe/…`;
}

/**
 * The preview. `companyName` and `postalAddress` are what e-mails would carry: the typed value, else what applies
 * in its place (the workspace's name, MAIL_POSTAL_ADDRESS).
 */
export function FooterPreview(props: { companyName: string; postalAddress: string }) {
  return (
    <div aria-label="Footer preview" role="group">
      <p className="field-label">Preview</p>
      <pre className="mono small footer-preview">{footerText(props)}</pre>
    </div>
  );
}
