// STRATEGY: the angle the e-mail takes, what it offers, the call to action and the tone, from the analysis.
import type { RunContext } from '../../engine.ts';
import type { AnalysisOutput, StrategyOutput } from '../../../schemas/outputs.ts';
import { companyOf } from './writing.ts';

export type StrategiseContext = RunContext & { analysis: AnalysisOutput };

export function chooseStrategy(ctx: StrategiseContext): StrategyOutput {
  const { analysis } = ctx;
  const company = companyOf(ctx);
  const notNow = analysis.sentiment === 'negative';
  const step = analysis.agreedNextStep ?? null;
  const pain = analysis.painPoints[0];
  const angle = notNow
    ? `Respect the "not now": a short note that keeps every promise made and asks for nothing ${company} declined.`
    : pain
      ? `Open on the call, name what matters most to ${company} (“${pain}”) in our words, restate every commitment with its date, and close on the agreed next step.`
      : `Open on the call, restate every commitment with its date, and close on the agreed next step with ${company}.`;
  const valuePropositions = [
    ...analysis.painPoints.slice(0, 2).map((p) => `Address: ${p}`),
    ...(analysis.objections[0] ? [`Answer the concern: ${analysis.objections[0]}`] : []),
  ];
  if (valuePropositions.length === 0) valuePropositions.push(`Make the next step easy for ${company}`);
  const callToAction = notNow
    ? 'No ask: keep the promised follow-up and the agreed time to check back.'
    : step
      ? `Confirm the ${step.what}${step.when ? ` on ${step.when}` : ''}${step.who.length ? ` with ${step.who.join(' and ')}` : ''}.`
      : analysis.buyingSignals.some((s) => /\b(?:pilot|trial|proof of concept)\b/i.test(s)) || analysis.nextSteps.some((s) => /\bpilot\b/i.test(s))
        ? 'Propose a short call next week to scope the pilot that was discussed.'
        : 'Propose a short call next week to agree next steps.';
  const tone = notNow ? 'brief, gracious, low-pressure' : analysis.sentiment === 'positive' ? 'warm, direct and confident' : 'plain, specific and concise';
  return { engine: 'offline', angle, valuePropositions: valuePropositions.slice(0, 4), callToAction, tone };
}
