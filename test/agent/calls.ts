// Realistic sales calls from different industries, each with the facts a follow-up draft must carry: the figures,
// the people with their roles, the tools, the budget and timing signals and every commitment the rep made.
import type { RunContext } from '../../src/agent/engine.ts';
import type { ResearchOutput } from '../../src/schemas/outputs.ts';

export interface QualityCall {
  industry: string;
  lead: { name: string; email: string; companyName: string; companyWebsite: string };
  sender: { name: string; signature: string | null };
  transcript: string;
  /** What the draft must carry, each as a pattern over its body. */
  facts: Array<{ what: string; pattern: RegExp }>;
}

export const QUALITY_CALLS: QualityCall[] = [
  {
    industry: 'warehousing',
    lead: { name: 'Maria Lopez', email: 'maria@northwind.example', companyName: 'Northwind Supply', companyWebsite: 'https://northwind.example' },
    sender: { name: 'Grace Hopper', signature: null },
    transcript: [
      'Rep: Thanks for the time today, Maria. How is fulfilment going?',
      'Maria: Honestly, our mis-pick rate is running at 3% and every wrong order costs us about $45 to fix.',
      'Rep: That adds up. Who else is involved in this?',
      'Maria: Daniel, our COO, owns the project, and he wants the pickers off paper lists.',
      'Maria: We run everything through NetSuite, and the pick lists are printed from spreadsheets.',
      'Rep: Would a pilot in one warehouse help?',
      'Maria: Yes. Budget is approved for Q3, and Daniel wants a decision by the end of the month.',
      'Rep: Great. I’ll send a pilot outline by Friday, and I’ll share two references from distributors your size.',
      'Maria: Perfect, please copy Daniel on it.',
      'Rep: Will do. Talk soon.',
    ].join('\n'),
    facts: [
      { what: 'the 3% mis-pick rate', pattern: /3%.{0,40}mis-pick|mis-pick.{0,40}3%/i },
      { what: 'the $45 per wrong order', pattern: /\$45/ },
      { what: 'Daniel', pattern: /Daniel/ },
      { what: 'the COO', pattern: /COO/ },
      { what: 'NetSuite', pattern: /NetSuite/ },
      { what: 'the Q3 budget', pattern: /budget is approved for Q3|budget.{0,30}Q3/i },
      { what: 'the decision by the end of the month', pattern: /end of the month/i },
      { what: 'the pilot outline', pattern: /pilot outline/i },
      { what: 'the two references', pattern: /two references/i },
    ],
  },
  {
    industry: 'software support',
    lead: { name: 'Priya Natarajan', email: 'priya@helio.example', companyName: 'Helio Software', companyWebsite: 'https://helio.example' },
    sender: { name: 'Jonas Berg', signature: 'Jonas Berg\nAccount Executive' },
    transcript: [
      'Jonas: Thanks for joining, Priya. How is the support team doing?',
      'Priya: Stretched. We handle around 1,200 tickets a week, and our first response time is 9 hours.',
      'Jonas: What are you using today?',
      'Priya: Zendesk, plus a shared Google Sheet for escalations. It’s a mess.',
      'Jonas: Who else would weigh in on a change?',
      'Priya: I’ll loop in Marco from IT, he owns the Zendesk setup. Our VP of Support, Elena, signs off.',
      'Priya: We want this live before our peak season in November.',
      'Priya: My worry is the migration effort, we can’t take the team offline.',
      'Jonas: Understood. I’ll send you a short security overview and a sample rollout plan.',
      'Jonas: I’ll also set up a call with our onboarding lead next week.',
    ].join('\n'),
    facts: [
      { what: 'the 1,200 tickets a week', pattern: /1,200 tickets/ },
      { what: 'the 9-hour first response', pattern: /9 hours/ },
      { what: 'Zendesk', pattern: /Zendesk/ },
      { what: 'the Google Sheet', pattern: /Google Sheet/ },
      { what: 'Marco from IT', pattern: /Marco/ },
      { what: 'Elena, VP of Support', pattern: /Elena.{0,30}VP of Support|VP of Support.{0,30}Elena/ },
      { what: 'live before November', pattern: /November/ },
      { what: 'the security overview', pattern: /security overview/i },
      { what: 'the rollout plan', pattern: /rollout plan/i },
      { what: 'the call with the onboarding lead', pattern: /onboarding lead/i },
    ],
  },
  {
    industry: 'healthcare',
    lead: { name: 'Dr. Amaka Okafor', email: 'amaka@brightclinics.example', companyName: 'Bright Clinics', companyWebsite: 'https://brightclinics.example' },
    sender: { name: 'Sam Rivera', signature: null },
    transcript: [
      'Sam: Good to meet you, Dr. Okafor. Thanks for making the time.',
      'Okafor: Likewise. Our no-show rate is about 18% across our four clinics.',
      'Okafor: The front desk re-enters every booking from Epic into a paper diary, which takes two hours a day.',
      'Sam: Who is involved in choosing a solution?',
      'Okafor: Sarah Lee, our practice manager, and our IT lead, Tom Baker.',
      'Okafor: We have $20,000 set aside for this year, but HIPAA compliance is a must.',
      'Sam: I’ll send our HIPAA documentation and a cost breakdown for the four clinics.',
      'Okafor: Good. We decide at the board meeting on March 12.',
      'Sam: I’ll have everything to you before then.',
    ].join('\n'),
    facts: [
      { what: 'the 18% no-show rate', pattern: /18%.{0,30}no-show|no-show.{0,30}18%/i },
      { what: 'the four clinics', pattern: /four clinics/i },
      { what: 'Epic', pattern: /Epic/ },
      { what: 'two hours a day', pattern: /two hours a day/i },
      { what: 'Sarah Lee, practice manager', pattern: /Sarah Lee.{0,30}practice manager|practice manager.{0,30}Sarah Lee/ },
      { what: 'Tom Baker, IT lead', pattern: /Tom Baker/ },
      { what: 'the $20,000', pattern: /\$20,000/ },
      { what: 'the March 12 board meeting', pattern: /March 12/ },
      { what: 'the HIPAA documentation', pattern: /HIPAA documentation/ },
      { what: 'the cost breakdown', pattern: /cost breakdown/i },
    ],
  },
  {
    industry: 'manufacturing',
    lead: { name: 'Viktor Novak', email: 'viktor@steelworks.example', companyName: 'Novak Steelworks', companyWebsite: 'https://steelworks.example' },
    sender: { name: 'Lena Fischer', signature: 'Lena Fischer | Solutions Consultant' },
    transcript: [
      'Lena: Thanks for walking me through the plant, Viktor.',
      'Viktor: Sure. Unplanned downtime cost us 140 hours last quarter on line 2.',
      'Viktor: Maintenance is tracked in Excel, and SAP doesn’t talk to it.',
      'Lena: Who else should be part of the next conversation?',
      'Viktor: Our plant manager, Ingrid Holm, and Felix from procurement.',
      'Viktor: Procurement needs three quotes before they sign anything over €50k.',
      'Viktor: If we see a 20% drop in downtime, Ingrid will push for all five plants.',
      'Lena: I’ll send a quote by Thursday and a case study from a similar plant.',
      'Lena: I’ll also book a site visit with our engineer for next month.',
      'Viktor: Great, our budget review is in October.',
    ].join('\n'),
    facts: [
      { what: 'the 140 hours of downtime', pattern: /140 hours/ },
      { what: 'Excel', pattern: /Excel/ },
      { what: 'SAP', pattern: /SAP/ },
      { what: 'Ingrid Holm, plant manager', pattern: /Ingrid Holm.{0,30}plant manager|plant manager.{0,30}Ingrid Holm/ },
      { what: 'Felix from procurement', pattern: /Felix/ },
      { what: 'the €50k threshold', pattern: /€50k/ },
      { what: 'the 20% drop', pattern: /20%/ },
      { what: 'the budget review in October', pattern: /October/ },
      { what: 'the quote', pattern: /quote/i },
      { what: 'the case study', pattern: /case study/i },
      { what: 'the site visit', pattern: /site visit/i },
    ],
  },
  {
    industry: 'higher education',
    lead: { name: 'Ahmed Karimi', email: 'ahmed@westbridge.example', companyName: 'Westbridge University', companyWebsite: 'https://westbridge.example' },
    sender: { name: 'Chloe Martin', signature: null },
    transcript: [
      'Chloe: Thanks for your time, Ahmed.',
      'Ahmed: No problem. We process 8,000 applications each cycle, and about 30% arrive incomplete.',
      'Ahmed: Our admissions officers chase missing transcripts by email, and it delays offers by two weeks.',
      'Chloe: What systems are involved?',
      'Ahmed: Slate for the CRM, and a homegrown document portal.',
      'Ahmed: My director, Karen Wu, will make the final call, and the next cycle opens on September 1.',
      'Chloe: Would a pilot with one faculty work?',
      'Ahmed: Possibly, but our budget is tight until the new financial year.',
      'Chloe: I’ll send a pilot proposal for the business school and pricing options for a phased start.',
      'Ahmed: Thanks, send it to Karen as well.',
    ].join('\n'),
    facts: [
      { what: 'the 8,000 applications', pattern: /8,000 applications/ },
      { what: 'the 30% incomplete', pattern: /30%/ },
      { what: 'the two-week delay', pattern: /two weeks/i },
      { what: 'Slate', pattern: /Slate/ },
      { what: 'Karen Wu, director', pattern: /Karen Wu/ },
      { what: 'September 1', pattern: /September 1\b/ },
      { what: 'the pilot proposal', pattern: /pilot proposal/i },
      { what: 'the pricing options', pattern: /pricing options/i },
    ],
  },
  {
    industry: 'accounting',
    lead: { name: 'Hannah Reid', email: 'hannah@reidpartners.example', companyName: 'Reid & Partners', companyWebsite: 'https://reidpartners.example' },
    sender: { name: 'Tomás Ortega', signature: 'Tomás Ortega\nSenior Account Executive\n+44 20 7946 0000' },
    transcript: [
      'Rep: Thanks for the call, Hannah.',
      'Hannah: Sure. We close the books for 65 clients each month, and reconciliation takes 3 days per client.',
      'Hannah: We use QuickBooks and Xero, and half the team still copies bank statements by hand.',
      'Rep: Who else is involved?',
      'Hannah: Our managing partner, Robert Lang, signs off on new software; our ops lead, Mei, would run the rollout.',
      'Hannah: Budget is approved for next quarter, and we want it in place before tax season in January.',
      'Rep: I’ll share a demo recording and an ROI calculator based on your 65 clients.',
      'Rep: And I’ll send answers to the security questionnaire for Robert.',
      'Hannah: Great, let’s talk again next Tuesday.',
    ].join('\n'),
    facts: [
      { what: 'the 65 clients', pattern: /65 clients/ },
      { what: 'the 3 days per client', pattern: /3 days/ },
      { what: 'QuickBooks', pattern: /QuickBooks/ },
      { what: 'Xero', pattern: /Xero/ },
      { what: 'Robert Lang, managing partner', pattern: /Robert Lang.{0,30}managing partner|managing partner.{0,30}Robert Lang/ },
      { what: 'Mei, ops lead', pattern: /Mei/ },
      { what: 'the approved budget', pattern: /budget is approved for next quarter|approved.{0,20}next quarter/i },
      { what: 'before tax season in January', pattern: /January/ },
      { what: 'the demo recording', pattern: /demo recording/i },
      { what: 'the ROI calculator', pattern: /ROI calculator/ },
      { what: 'the security questionnaire', pattern: /security questionnaire/i },
    ],
  },
  {
    industry: 'e-commerce',
    lead: { name: 'Fatima Haddad', email: 'fatima@loomandthread.example', companyName: 'Loom & Thread', companyWebsite: 'https://loomandthread.example' },
    sender: { name: 'Owen Price', signature: null },
    transcript: [
      'Owen: Thanks for jumping on, Fatima.',
      'Fatima: Happy to. Our cart abandonment rate is 72%, and email revenue dropped 15% since we moved to Shopify Plus.',
      'Fatima: We run campaigns in Mailchimp, and segmentation is a manual export every Monday.',
      'Owen: Who owns this on your side?',
      'Fatima: I do, with Leo, our head of growth. Our CFO, Nadia, approves anything over $10,000 a year.',
      'Fatima: We’re planning the switch before Black Friday, so we need a decision by October 15.',
      'Owen: I’ll send a migration checklist and two customer references in fashion retail.',
      'Owen: I’ll also put together a pricing proposal for 250,000 contacts.',
      'Fatima: Perfect, thanks Owen.',
    ].join('\n'),
    facts: [
      { what: 'the 72% cart abandonment', pattern: /72%/ },
      { what: 'the 15% drop', pattern: /15%/ },
      { what: 'Shopify Plus', pattern: /Shopify Plus/ },
      { what: 'Mailchimp', pattern: /Mailchimp/ },
      { what: 'Leo, head of growth', pattern: /Leo.{0,30}head of growth|head of growth.{0,30}Leo/ },
      { what: 'Nadia, CFO', pattern: /Nadia/ },
      { what: 'the decision by October 15', pattern: /October 15/ },
      { what: 'the migration checklist', pattern: /migration checklist/i },
      { what: 'the customer references', pattern: /references/i },
      { what: 'the pricing proposal', pattern: /pricing proposal/i },
    ],
  },
];

export function researchFor(call: QualityCall): ResearchOutput {
  return {
    engine: 'offline',
    website: { url: call.lead.companyWebsite, fetched: false, status: null, error: 'not fetched in tests', title: null, description: null, summary: null },
    facts: [],
    sources: [],
  };
}

export function contextFor(call: QualityCall, index: number): RunContext & { research: ResearchOutput } {
  return {
    runId: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
    lead: { id: `lead-${index}`, ...call.lead },
    call: { id: `call-${index}`, title: 'Discovery call', transcript: call.transcript, occurredAt: new Date('2026-03-03T10:00:00Z') },
    senderName: call.sender.name,
    research: researchFor(call),
  };
}
