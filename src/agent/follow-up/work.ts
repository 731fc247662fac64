// The follow-up writer's work on a stranger's text (the transcript, the earlier touches, the buyer's reply), as pure
// functions of plain data: run in a CPU pool thread (src/cpu/tasks.ts) when the caller has a pool, else in place.
import { readCallFacts } from '../engines/offline/facts.ts';
import { readFeedback } from '../engines/offline/feedback.ts';
import type { Draft } from '../grounding.ts';
import { checkFollowUp, FOLLOW_UP_WORDS } from './checks.ts';
import { allowedPhrases, writeOffline } from './draft.ts';
import type { FollowUpBriefing, FollowUpDraft, FollowUpInput } from './types.ts';
import { madeBefore, pointsOf, readEarlier } from './points.ts';
import { readReply, REPLY_ANSWER_WORDS } from './reply.ts';

const FRESH_POINTS_SHOWN = 6;

/** The offline writer's follow-up. */
export function writeFollowUpOffline(input: FollowUpInput): FollowUpDraft {
  return writeOffline(input);
}

export function briefFollowUp(input: FollowUpInput): FollowUpBriefing {
  const facts = readCallFacts(input.call.transcript, input.lead.name, input.sender?.name ?? null, input.lead.companyName);
  const said = readEarlier(input.earlier);
  const reply = input.reply?.text.trim() ? input.reply.text : null;
  const style = readFeedback(input.feedback, null);
  return {
    freshPoints: pointsOf(facts, input.research).filter((p) => !madeBefore(p.text, said)).map((p) => p.text).slice(0, FRESH_POINTS_SHOWN),
    allowed: allowedPhrases(facts),
    limit: reply && readReply(reply).kind === 'question' ? REPLY_ANSWER_WORDS : Math.min(style.wordLimit ?? FOLLOW_UP_WORDS, FOLLOW_UP_WORDS),
  };
}

export function checkFollowUpDraft({ draft, input, briefing }: { draft: Draft; input: FollowUpInput; briefing: FollowUpBriefing }): string[] {
  return checkFollowUp(draft, input, briefing.limit, briefing.allowed);
}
