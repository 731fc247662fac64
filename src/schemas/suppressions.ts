// The suppression list (DESIGN §15): the addresses and domains of a workspace that nothing is delivered to.
import { Type } from 'typebox';
import { EMAIL_MAX, Id, Int32, Nullable, Timestamp } from './common.ts';

export const SUPPRESSION_REASONS = ['unsubscribed', 'bounced', 'complained', 'manual', 'imported'] as const;
export const SUPPRESSION_SOURCE_MAX = 40;
/** A domain name as DNS bounds it. */
export const DOMAIN_MAX = 253;

const SuppressionReason = Type.Enum(SUPPRESSION_REASONS, {
  description: 'Why: `unsubscribed` (the link or a reply asking to stop), `bounced` (the server refused the address), '
    + '`complained`, `manual` (a person added it), `imported` (a CSV import).',
});

export const Suppression = Type.Object({
  id: Id('Identifier of the entry.'),
  email: Nullable(Type.String({ maxLength: EMAIL_MAX, description: 'The address, lower-cased; null for a domain.' })),
  domain: Nullable(Type.String({ maxLength: DOMAIN_MAX, description: 'The domain, lower-cased: every address at it; null for an address.' })),
  reason: SuppressionReason,
  source: Type.String({ maxLength: SUPPRESSION_SOURCE_MAX, description: 'Where it came from: `unsubscribe_link`, `bounce`, `reply`, `api`, `ui`, `import`.' }),
  createdAt: Timestamp('When it was added.'),
}, {
  $id: 'Suppression',
  examples: [{
    id: '0f8fad5b-d9cb-469f-a165-70867728950e', email: 'ada@example.com', domain: null, reason: 'unsubscribed',
    source: 'unsubscribe_link', createdAt: '2026-03-14T09:30:00.000Z',
  }],
});

export const SuppressionCreate = Type.Object({
  email: Type.Optional(Type.String({ minLength: 3, maxLength: EMAIL_MAX, description: 'An address to suppress; or give `domain`.' })),
  domain: Type.Optional(Type.String({ minLength: 1, maxLength: DOMAIN_MAX, description: 'A domain to suppress (every address at it); or give `email`.' })),
  reason: Type.Optional(Type.Enum(['manual', 'complained', 'unsubscribed', 'bounced'], { description: 'Why; `manual` when left out.' })),
}, { additionalProperties: false, examples: [{ email: 'ada@example.com' }, { domain: 'example.org', reason: 'complained' }] });

export const SuppressionImportSummary = Type.Object({
  added: Int32({ minimum: 0, description: 'Entries added.' }),
  existing: Int32({ minimum: 0, description: 'Rows naming an address or domain already on the list (left as they were).' }),
  invalid: Int32({ minimum: 0, description: 'Rows naming neither an address nor a domain, skipped.' }),
}, { examples: [{ added: 120, existing: 3, invalid: 1 }] });
