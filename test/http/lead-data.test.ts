// The data people bring (issue 45): blank names, websites written without a scheme, internationalised addresses,
// other CRMs' exports and leadrun's own export read back, through POST/PATCH /api/v1/leads and the import alike.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { BACKENDS, startTestApp, type ApiResponse, type TestApp } from '../helpers.ts';
import { assertInvalid, createLead } from './support.ts';

const IMPORT = '/api/v1/leads/import';
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

async function importCsv(t: TestApp, key: string, csv: string, query = ''): Promise<ApiResponse> {
  const res = await fetch(`${t.url}${IMPORT}${query}`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' }, body: csv,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined, text };
}

/** The message of the one error on `field`. */
function messageOf(res: ApiResponse, field: string): string {
  const errors = res.json.errors.filter((e: { field: string }) => e.field === field);
  assert.equal(errors.length, 1, `one error on ${field}: ${res.text}`);
  return errors[0].message;
}

for (const kind of BACKENDS) {
  describe(`lead data (${kind})`, () => {
    let t: TestApp;

    /** A workspace of its own, so that each test sees only its leads. */
    const fresh = async () => {
      const w = await t.workspace('pro');
      return { ...w, key: (await t.key(w.id)).key };
    };

    before(async () => {
      t = await startTestApp(kind, { config: { rateLimitPerMinute: 1_000_000 } });
    });
    after(async () => {
      await t?.close();
    });

    it('refuses a blank name on create, patch and import with one message', async () => {
      const { key } = await fresh();
      for (const name of ['   ', '', '\t\u00a0']) {
        const res = await t.api('POST', '/api/v1/leads', { key, body: { name } });
        assertInvalid(res, ['name'], JSON.stringify(name));
        assert.equal(messageOf(res, 'name'), 'must not be blank');
      }
      const lead = await createLead(t, key, { name: 'Ada' });
      const patched = await t.api('PATCH', `/api/v1/leads/${lead.id}`, { key, body: { name: '  ' } });
      assertInvalid(patched, ['name']);
      assert.equal(messageOf(patched, 'name'), 'must not be blank');
      const csv = await importCsv(t, key, 'name,email\n"   ",a@example.com\nBea,b@example.com\n');
      assert.equal(csv.status, 200, csv.text);
      assert.deepEqual(csv.json.errors, [{ row: 2, field: 'name', message: 'must not be blank' }]);
      const json = await t.api('POST', IMPORT, { key, body: { leads: [{ name: ' ' }] } });
      assert.deepEqual(json.json.errors, [{ row: 0, field: 'name', message: 'must not be blank' }]);
    });

    it('takes a website without a scheme as https://host, and still refuses other schemes', async () => {
      const { key } = await fresh();
      const bare = await createLead(t, key, { name: 'Kestrel', companyWebsite: 'www.kestrelfreight.nl' });
      assert.equal(bare.companyWebsite, 'https://www.kestrelfreight.nl');
      const patched = await t.api('PATCH', `/api/v1/leads/${bare.id}`, {
        key, body: { companyWebsite: 'sato.example/about?x=1' },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.json.data.companyWebsite, 'https://sato.example/about?x=1');
      const kept = await createLead(t, key, { name: 'Kept', companyWebsite: 'http://plain.example:8080/' });
      assert.equal(kept.companyWebsite, 'http://plain.example:8080/');
      const port = await createLead(t, key, { name: 'Port', companyWebsite: 'sato.example:8080' });
      assert.equal(port.companyWebsite, 'https://sato.example:8080');
      for (const companyWebsite of [
        'ftp://files.example', 'mailto:a@b.example', 'javascript:alert(1)', 'hello', 'localhost:3000',
        'www.exa mple.com', '//example.com', 'https://', 'www.example.com\n',
      ]) {
        const res = await t.api('POST', '/api/v1/leads', { key, body: { name: 'X', companyWebsite } });
        assertInvalid(res, ['companyWebsite'], companyWebsite);
        assert.match(messageOf(res, 'companyWebsite'), /must be an http or https URL, or a host name/);
      }
      const csv = await importCsv(t, key,
        'name,website\nSato,sato.example\nFtp,ftp://files.example\nWww,www.kestrelfreight.nl\n');
      assert.equal(csv.status, 200, csv.text);
      assert.deepEqual(csv.json.errors.map((e: { row: number; field: string }) => [e.row, e.field]),
        [[3, 'companyWebsite']]);
      const websites = async (q: string) => (await t.api('GET', `/api/v1/leads?q=${q}`, { key })).json.data
        .map((l: { companyWebsite: string }) => l.companyWebsite);
      assert.deepEqual(await websites('sato'), ['https://sato.example']);
      assert.deepEqual(await websites('www'), ['https://www.kestrelfreight.nl']);
    });

    it('takes internationalised addresses as written, and says what is wrong with one that is not one', async () => {
      const { key } = await fresh();
      const unicode = await createLead(t, key, { name: 'Müller', email: 'info@müller.de' });
      assert.equal(unicode.email, 'info@müller.de');
      const res = await importCsv(t, key,
        'name,email\nÖmer,ömer.nováková0@example.com\nNo At,omer.example.com\nNo Dot,a@b\n');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.created, 1);
      assert.deepEqual(res.json.errors, [
        { row: 3, field: 'email', message: 'must be an e-mail address: no @' },
        { row: 4, field: 'email', message: 'must be an e-mail address: the domain has no dot' },
      ]);
      const bad = await t.api('POST', '/api/v1/leads', { key, body: { name: 'X', email: 'x@@y.example' } });
      assert.equal(messageOf(bad, 'email'), 'must be an e-mail address: more than one @');
      const patched = await t.api('PATCH', `/api/v1/leads/${unicode.id}`, { key, body: { email: 'ömer@例え.jp' } });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.json.data.email, 'ömer@例え.jp');
    });

    it('reads its own export back: 20 tricky leads come back identical in another workspace', async () => {
      const a = await fresh();
      const b = await fresh();
      const tricky = [
        '=1+1', '+33 6 12 34 56 78', '-5 Ltd', '@handle', '  leading spaces', 'trailing spaces  ', 'Say "hello"',
        'Comma, Inc', 'Line\nbreak', 'Carriage\r\nreturn', 'Zoë Ångström', '山田 太郎', 'Emoji 🚀 Co', "'quoted'",
        "'=already", '=HYPERLINK("x")', ' ', '\t tabbed', 'semi;colon', 'Ünïcödé ümlaut',
      ];
      for (const [i, text] of tricky.entries()) {
        await createLead(t, a.key, {
          name: text === ' ' ? `Lead ${i}` : text, companyName: text, email: `lead${i}@example.com`,
          ...(i % 4 === 0 ? { companyWebsite: `https://site${i}.example/p?q=${i}` } : {}),
          status: (['DISCOVERY', 'CONTACTED', 'QUALIFIED', 'WON'] as const)[i % 4],
          ...(i % 3 === 0 ? { timeZone: 'America/New_York' } : {}),
        });
      }
      const exported = await fetch(`${t.url}/api/v1/leads/export`, { headers: { authorization: `Bearer ${a.key}` } });
      const csv = await exported.text();
      assert.match(csv.split('\r\n')[0]!, /,ownerName,ownerEmail,lastContactedAt,lastReplyAt,timeZone$/);
      const res = await importCsv(t, b.key, csv);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([res.json.created, res.json.skipped], [20, 0], res.text);
      const ignored = res.json.columns.filter((c: { field: string | null }) => c.field === null)
        .map((c: { header: string }) => c.header);
      assert.deepEqual(ignored,
        ['createdAt', 'updatedAt', 'ownerName', 'ownerEmail', 'lastContactedAt', 'lastReplyAt']);
      const fields = (lead: Record<string, unknown>) => [lead.name, lead.email, lead.companyName, lead.companyWebsite,
        lead.status, lead.timeZone].map((v) => JSON.stringify(v)).join(' ');
      const listed = async (key: string) =>
        (await t.api('GET', '/api/v1/leads?limit=100', { key })).json.data.map(fields).sort();
      assert.deepEqual(await listed(b.key), await listed(a.key));
    });

    it('exports the owner, the last contact and the last reply, as the leads table shows them', async () => {
      const a = await fresh();
      const lead = await createLead(t, a.key, { name: 'Owned', assignedToUserId: a.adminUserId });
      const owner = await t.deps.db.selectFrom('users').select(['name', 'email']).where('id', '=', a.adminUserId)
        .executeTakeFirstOrThrow();
      await t.deps.db.updateTable('leads').set({ last_contacted_at: new Date('2026-01-02T03:04:05.006Z') })
        .where('id', '=', lead.id).execute();
      const exported = await fetch(`${t.url}/api/v1/leads/export`, { headers: { authorization: `Bearer ${a.key}` } });
      const csv = await exported.text();
      const row = csv.split('\r\n')[1]!;
      assert.ok(row.endsWith(`,${owner.name ?? ''},${owner.email ?? ''},2026-01-02T03:04:05.006Z,,`), row);
    });

    it("imports an Apollo export: its Stage is no status, its headers are read, LinkedIn is no website", async () => {
      const { key } = await fresh();
      const res = await importCsv(t, key, fixture('apollo-contacts.csv'));
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([res.json.created, res.json.skipped, res.json.warnings], [12, 0, []], res.text);
      const field = (header: string) => res.json.columns.find((c: { header: string }) => c.header === header).field;
      const headers = [
        'First Name', 'Last Name', 'Company', 'Company Name for Emails', 'Email', 'Stage', 'Person Linkedin Url',
        'Website',
      ];
      assert.deepEqual(headers.map(field),
        ['firstName', 'lastName', 'companyName', null, 'email', null, null, 'companyWebsite']);
      const leads = (await t.api('GET', '/api/v1/leads?limit=100', { key })).json.data;
      assert.ok(leads.every((l: { status: string }) => l.status === 'DISCOVERY'));
      const sato = leads.find((l: { name: string }) => l.name === 'Kenji Sato');
      assert.deepEqual([sato.email, sato.companyName, sato.companyWebsite],
        ['kenji@sato.example', 'Sato Robotics', 'https://sato.example']);
    });

    it('imports a Salesforce export: unknown statuses as the default, a warning per value, and statusMap', async () => {
      const { key } = await fresh();
      const csv = fixture('salesforce-leads.csv');
      const res = await importCsv(t, key, csv, '?dryRun=true');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([res.json.created, res.json.skipped], [12, 0], res.text);
      const warned = res.json.warnings
        .map((w: { field: string; value: string; rows: number }) => [w.field, w.value, w.rows]);
      assert.deepEqual(warned, [
        ['status', 'Open - Not Contacted', 2], ['status', 'Working - Contacted', 2], ['status', 'Contact in Future', 2],
        ['status', 'Closed - Not Converted', 1], ['status', 'SENT', 2], ['status', 'Closed - Converted', 1],
      ]);
      assert.match(res.json.warnings[0].message, /statusMap=Open - Not Contacted:STATUS/);
      const mapped = await importCsv(t, key, csv,
        `?statusMap=${encodeURIComponent('contact in future:CONTACTED')}&statusMap=SENT:contacted`
        + `&statusMap=${encodeURIComponent('Closed - Converted:WON')}`);
      assert.equal(mapped.status, 200, mapped.text);
      assert.deepEqual(mapped.json.warnings.map((w: { value: string }) => w.value),
        ['Open - Not Contacted', 'Working - Contacted', 'Closed - Not Converted']);
      const leads = (await t.api('GET', '/api/v1/leads?limit=100', { key })).json.data;
      const statusOf = (name: string) => leads.find((l: { name: string }) => l.name === name).status;
      const names = ['Olivia Brown', 'Aiko Tanaka', 'Ravi Patel', 'Mateo López', 'Felix Wagner', 'Hanna Schmidt'];
      assert.deepEqual(names.map(statusOf), ['CONTACTED', 'CONTACTED', 'WON', 'QUALIFIED', 'WON', 'DISCOVERY']);
      const hanna = leads.find((l: { name: string }) => l.name === 'Hanna Schmidt');
      assert.deepEqual([hanna.email, hanna.companyName, hanna.companyWebsite],
        ['hanna.schmidt@mueller-maschinenbau.example', 'Müller Maschinenbau GmbH',
          'https://www.mueller-maschinenbau.example']);
      const bad = await importCsv(t, key, csv, '?statusMap=Cold:HOT');
      assertInvalid(bad, ['statusMap']);
      const json = await t.api('POST', `${IMPORT}?statusMap=Cold:DISCOVERY`, { key, body: { leads: [{ name: 'X' }] } });
      assertInvalid(json, ['statusMap']);
    });

    /** How the answer read each of `headers`. */
    const fieldsOf = (res: ApiResponse, headers: string[]) =>
      headers.map((header) => res.json.columns.find((c: { header: string }) => c.header === header).field);
    const warningsOf = (res: ApiResponse) =>
      res.json.warnings.map((w: { field: string; value: string; rows: number }) => [w.field, w.value, w.rows]);
    /** The stored leads of a workspace, by name. */
    const leadsOf = async (key: string) => {
      const leads = (await t.api('GET', '/api/v1/leads?limit=100', { key })).json.data;
      return (name: string) => {
        const lead = leads.find((l: { name: string }) => l.name === name);
        assert.ok(lead, `a lead named ${name}`);
        return [lead.email, lead.companyName, lead.companyWebsite, lead.status];
      };
    };

    it('imports a HubSpot export: a BOM, Lead Status warned of, Lifecycle Stage ignored, a nameless row skipped',
      async () => {
      const { key } = await fresh();
      const res = await importCsv(t, key, fixture('hubspot-contacts.csv'));
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([res.json.created, res.json.skipped], [11, 1], res.text);
      // A form's subscriber known by an e-mail alone has no name, which a lead needs.
      assert.deepEqual(res.json.errors, [{ row: 6, field: 'name', message: 'is required' }]);
      assert.deepEqual(fieldsOf(res, ['Record ID', 'First Name', 'Last Name', 'Email', 'Company Name', 'Website URL',
        'Lifecycle Stage', 'Lead Status', 'Associated Company']),
      [null, 'firstName', 'lastName', 'email', 'companyName', 'companyWebsite', null, 'status', null]);
      assert.deepEqual(warningsOf(res), [
        ['status', 'New', 2], ['status', 'Open', 2], ['status', 'In Progress', 1], ['status', 'Open Deal', 1],
        ['status', 'Unqualified', 1], ['status', 'Attempted to Contact', 1], ['status', 'Connected', 1],
        ['status', 'Bad Timing', 1],
      ]);
      const lead = await leadsOf(key);
      assert.deepEqual(lead('Élodie Lefèvre'), ['elodie.lefevre@boulangerie-lefevre.example',
        'Boulangerie Lefèvre, SARL', 'https://boulangerie-lefevre.example', 'DISCOVERY']);
      assert.deepEqual(lead("Grace O'Neill"),
        ['grace@oneill-design.example', "O'Neill Design", 'http://oneill-design.example', 'DISCOVERY']);
      assert.deepEqual(lead('Fatima Al-Sayed'),
        ['fatima@alsayed-trading.example', 'Al-Sayed Trading', null, 'DISCOVERY']);
    });

    it("imports a Pipedrive deals export: the person's work e-mail, the organisation, Deal - Stage as statuses",
      async () => {
      const { key } = await fresh();
      const csv = fixture('pipedrive-deals.csv');
      const res = await importCsv(t, key, csv, '?dryRun=true');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([res.json.created, res.json.skipped], [12, 0], res.text);
      assert.deepEqual(fieldsOf(res, ['Deal - Title', 'Deal - Stage', 'Deal - Status', 'Deal - Owner', 'Person - Name',
        'Person - Email - Work', 'Person - Email - Home', 'Organization - Name', 'Organization - Address']),
      [null, 'status', null, null, 'name', 'email', null, 'companyName', null]);
      // The default pipeline's first stage, Qualified, is a lead status: the column is read, the other stages are
      // warned of.
      assert.deepEqual(warningsOf(res), [['status', 'Contact Made', 3], ['status', 'Demo Scheduled', 2],
        ['status', 'Proposal Made', 2], ['status', 'Negotiations Started', 2]]);
      const mapped = await importCsv(t, key, csv, `?statusMap=${encodeURIComponent('Contact Made:CONTACTED')}`
        + `&statusMap=${encodeURIComponent('Proposal Made:PROPOSAL')}`);
      assert.equal(mapped.status, 200, mapped.text);
      assert.deepEqual(mapped.json.warnings.map((w: { value: string }) => w.value),
        ['Demo Scheduled', 'Negotiations Started']);
      const lead = await leadsOf(key);
      assert.deepEqual(lead('Anneke de Vries'),
        ['anneke@kestrelfreight.nl', 'Kestrel Freight B.V.', null, 'QUALIFIED']);
      assert.deepEqual(lead('Paweł Ślusarczyk'),
        ['pawel@slusarczyk-metal.example', 'Ślusarczyk Metal Sp. z o.o.', null, 'CONTACTED']);
      assert.deepEqual(lead('Keisha Williams'), ['keisha@brightpath.example', 'BrightPath, Inc.', null, 'DISCOVERY']);
      assert.deepEqual(lead('Renée Dupont'), ['renee@cafenoir.example', 'Café Noir', null, 'PROPOSAL']);
      // A home address alone is not taken for the address to sell to; the person is imported without one.
      assert.deepEqual(lead('Håkon Næss'), [null, 'Næss Fiskeri AS', null, 'QUALIFIED']);
    });

    it('imports a Zoho CRM export, saved with commas and a BOM or with semicolons: Contacted is a status', async () => {
      const { key } = await fresh();
      const csv = fixture('zoho-leads.csv');
      // Every cell of Zoho's export is quoted, so a spreadsheet's semicolon-separated copy differs only in delimiter.
      for (const file of [csv, csv.replaceAll('","', '";"')]) {
        const res = await importCsv(t, key, file, '?dryRun=true');
        assert.equal(res.status, 200, res.text);
        assert.deepEqual([res.json.created, res.json.skipped], [11, 1], res.text);
        assert.deepEqual(res.json.errors,
          [{ row: 13, field: 'email', message: 'must be an e-mail address: the domain has no dot' }]);
        assert.deepEqual(fieldsOf(res, ['Record Id', 'Lead Owner', 'Salutation', 'First Name', 'Last Name', 'Company',
          'Email', 'Secondary Email', 'Website', 'Lead Status']),
        [null, null, null, 'firstName', 'lastName', 'companyName', 'email', null, 'companyWebsite', 'status']);
        assert.deepEqual(warningsOf(res), [
          ['status', 'Attempted to Contact', 2], ['status', 'Contact in Future', 1], ['status', 'Junk Lead', 1],
          ['status', 'Lost Lead', 1], ['status', 'Not Contacted', 3], ['status', 'Pre-Qualified', 1],
          ['status', 'Not Qualified', 1],
        ]);
      }
      const res = await importCsv(t, key, csv, `?statusMap=${encodeURIComponent('Lost Lead:LOST')}`);
      assert.deepEqual([res.status, res.json.created], [200, 11], res.text);
      const lead = await leadsOf(key);
      assert.deepEqual(lead('Ayşe Demir'),
        ['ayse.demir@demirinsaat.example', 'Demir İnşaat A.Ş.', 'http://demirinsaat.example', 'CONTACTED']);
      assert.deepEqual(lead('Pedro Álvarez'), ['pedro@alvarez-asociados.example', 'Álvarez y Asociados, S.C.',
        'https://alvarez-asociados.example', 'LOST']);
      assert.deepEqual(lead('Nguyễn Văn An'),
        ['an@anphat.example', 'Công ty TNHH An Phát', 'https://anphat.example', 'DISCOVERY']);
      assert.deepEqual(lead('Søren Kierkegaard'),
        ['soren@kierkegaard-aps.example', 'Kierkegaard ApS', 'https://kierkegaard-aps.example', 'DISCOVERY']);
    });

    it("imports a Close export: a row per contact, the lead's name as the company, Display Name ignored", async () => {
      const { key } = await fresh();
      const res = await importCsv(t, key, fixture('close-leads.csv'));
      assert.equal(res.status, 200, res.text);
      // A lead without contacts is a row without a person, which is no lead of leadrun's.
      assert.deepEqual([res.json.created, res.json.skipped], [11, 1], res.text);
      assert.deepEqual(res.json.errors, [{ row: 6, field: 'name', message: 'is required' }]);
      assert.deepEqual(fieldsOf(res, ['id', 'Display Name', 'Lead Name', 'Status', 'URL', 'Description', 'Contact Name',
        'Contact Title', 'Contact Email']),
      [null, null, 'companyName', 'status', 'companyWebsite', null, 'name', null, 'email']);
      assert.deepEqual(warningsOf(res),
        [['status', 'Potential', 5], ['status', 'Customer', 2], ['status', 'Bad Fit', 2]]);
      const lead = await leadsOf(key);
      assert.deepEqual(lead('Road Runner'),
        ['rr@acme-rockets.example', 'Acme Rocket Supply', 'https://acme-rockets.example', 'DISCOVERY']);
      assert.deepEqual(lead('Ursula Zürcher'), ['ursula@baeckerei-zuercher.example', 'Bäckerei Zürcher',
        'https://baeckerei-zuercher.example', 'QUALIFIED']);
      assert.deepEqual(lead('Priya Nair'),
        ['priya@orionlabs.example', 'Orion Labs, Inc.', 'http://orionlabs.example', 'DISCOVERY']);
      // A lead named after its one contact has no company; its Display Name would have made one of the person.
      assert.deepEqual(lead('Jean-Luc Picard'), ['jl.picard@starfleet.example', null, null, 'DISCOVERY']);
    });

    it('reads a Lifecycle Stage or Deal - Stage column as the status only when its values are statuses', async () => {
      const { key } = await fresh();
      const lifecycle = await importCsv(t, key, 'Name,Lifecycle Stage\nA,lead\nB,customer\n', '?dryRun=true');
      assert.deepEqual([lifecycle.status, lifecycle.json.created, lifecycle.json.warnings], [200, 2, []],
        lifecycle.text);
      assert.deepEqual(fieldsOf(lifecycle, ['Lifecycle Stage']), [null]);
      const deal = await importCsv(t, key, 'Person - Name,Deal - Stage\nA,Won\nB,Lost\nC,Contact Made\n',
        '?dryRun=true');
      assert.deepEqual([deal.status, deal.json.created], [200, 3], deal.text);
      assert.deepEqual(fieldsOf(deal, ['Deal - Stage']), ['status']);
      assert.deepEqual(warningsOf(deal), [['status', 'Contact Made', 1]]);
    });

    it('reads a Stage column of statuses as the status, and more e-mail and company headers', async () => {
      const { key } = await fresh();
      const res = await importCsv(t, key,
        'Name,Email 1,Account Name,Stage\nA,a@example.com,Acme,Qualified\nB,b@example.com,Beta,Cold\nC,,,COLD\n');
      assert.equal(res.status, 200, res.text);
      const fields = res.json.columns.map((c: { field: string }) => c.field);
      assert.deepEqual(fields, ['name', 'email', 'companyName', 'status']);
      assert.deepEqual(res.json.warnings.map((w: { value: string; rows: number }) => [w.value, w.rows]), [['Cold', 2]]);
    });
  });
}
