// Each step's output, for a person: research facts with their sources, what the call revealed, the chosen
// strategy. Never raw JSON.
import { useState } from 'react';
import type { AnalysisOutput, ResearchOutput, Step, StrategyOutput } from '../../api/types';
import { Icon } from '../../components/Icon';
import { Badge } from '../../components/ui';
import { formatDuration, formatNumber, hostOf, shortUrl, withoutFinalPeriod } from '../../lib/format';

export function StepFooter({ step }: { step: Step }) {
  const parts = [
    step.engine === 'offline' ? 'Offline engine' : step.engine === 'model' ? 'Model engine' : null,
    step.model,
    step.durationMs !== null ? formatDuration(step.durationMs) : null,
    step.usage ? `${formatNumber(step.usage.totalTokens)} tokens` : null,
    step.attempts > 1 ? `${step.attempts} attempts` : null,
  ].filter(Boolean);
  if (!parts.length) return null;
  return <p className="step-footer">{parts.join(' · ')}</p>;
}

type EvidenceKind = NonNullable<AnalysisOutput['evidence']>[number]['kind'];

/** Where each item of an analysis came from: the transcript's lines, by the item's kind and text. */
interface Sources {
  /** The transcript's lines, as the call holds it; empty while it loads, or when it cannot be read. */
  transcript: string[];
  linesOf(kind: EvidenceKind, text: string): number[];
}

/**
 * The lines an item was read from: "line 12" shows them on hover (its title) and, clicked, below the item, so that a
 * person can check what the analysis says against what was said.
 */
function SourceLines({ lines, transcript }: { lines: number[]; transcript: string[] }) {
  const [open, setOpen] = useState(false);
  if (lines.length === 0) return null;
  const said = lines.map((line) => ({ line, text: transcript[line - 1]?.trim() ?? '' }));
  const label = lines.length === 1 ? `line ${lines[0]}` : `lines ${lines.join(', ')}`;
  return (
    <>
      {' '}
      <button type="button" className="source-lines" aria-expanded={open} onClick={() => setOpen(!open)}
        title={said.map((s) => `${s.line}: ${s.text}`).join('\n')}>
        {label}
      </button>
      {open && (
        <blockquote className="source-quote">
          {said.map((s) => <p key={s.line}><span className="source-line-number">{s.line}</span> {s.text}</p>)}
        </blockquote>
      )}
    </>
  );
}

function List({ items, empty, quote = false, kind, sources }: {
  items: string[]; empty: string; quote?: boolean; kind?: EvidenceKind; sources?: Sources;
}) {
  if (items.length === 0) return <p className="muted small">{empty}</p>;
  return (
    <ul className={`bullet-list${quote ? ' quote-list' : ''}`}>
      {items.map((item, i) => (
        <li key={i}>
          {quote ? `“${item.replace(/^["“]|["”]$/g, '')}”` : item}
          {kind && sources && <SourceLines lines={sources.linesOf(kind, item)} transcript={sources.transcript} />}
        </li>
      ))}
    </ul>
  );
}

export function ResearchView({ output }: { output: ResearchOutput }) {
  const { website, facts, sources } = output;
  return (
    <div className="step-view">
      {!website.url && (
        <p className="callout callout-muted"><Icon name="info" /> The lead has no website, so there was nothing to research. The draft leans on the call alone.</p>
      )}
      {website.url && !website.fetched && (
        <p className="callout callout-warning">
          <Icon name="alert" />
          <span>{hostOf(website.url)} could not be read{website.error ? `: ${withoutFinalPeriod(website.error)}` : ''}. The draft leans on the call alone.</span>
        </p>
      )}
      {website.url && website.fetched && (
        <div className="site">
          <div className="site-icon"><Icon name="globe" size={18} /></div>
          <div>
            <a href={website.url} target="_blank" rel="noopener noreferrer" className="site-title">{website.title || hostOf(website.url)}</a>
            <div className="site-url">{shortUrl(website.url)}</div>
            {website.description && <p className="site-description">{website.description}</p>}
          </div>
        </div>
      )}
      {website.summary && <p className="prose">{website.summary}</p>}
      {facts.length > 0 && (
        <>
          <h4 className="view-heading">Facts found <span className="count">{facts.length}</span></h4>
          <ol className="fact-list">
            {facts.map((fact, i) => (
              <li key={i}>
                <span>{fact.text}</span>
                <a href={fact.source} target="_blank" rel="noopener noreferrer" className="source-link" title={fact.source}>
                  {shortUrl(fact.source)} <Icon name="external" size={11} />
                </a>
              </li>
            ))}
          </ol>
        </>
      )}
      {website.fetched && facts.length === 0 && <p className="muted small">No concrete facts stood out on the pages read.</p>}
      {sources.length > 0 && (
        <p className="sources">
          <span className="muted">Pages read:</span>{' '}
          {sources.map((source, i) => (
            <span key={source}>{i > 0 && ', '}<a href={source} target="_blank" rel="noopener noreferrer">{shortUrl(source)}</a></span>
          ))}
        </p>
      )}
    </div>
  );
}

const SENTIMENT: Record<AnalysisOutput['sentiment'], { tone: 'green' | 'neutral' | 'red'; label: string }> = {
  positive: { tone: 'green', label: 'Positive call' },
  neutral: { tone: 'neutral', label: 'Neutral call' },
  negative: { tone: 'red', label: 'Negative call' },
};

export function AnalysisView({ output, transcript = null }: { output: AnalysisOutput; transcript?: string | null }) {
  const sentiment = SENTIMENT[output.sentiment];
  const sources: Sources = {
    transcript: transcript?.split(/\r\n|\r|\n/) ?? [],
    linesOf: (kind, text) => output.evidence?.find((e) => e.kind === kind && e.text === text)?.lines ?? [],
  };
  const commitments = output.commitments ?? [];
  return (
    <div className="step-view">
      <p><Badge tone={sentiment.tone}>{sentiment.label}</Badge></p>
      <div className="analysis-grid">
        <section aria-label="Pain points">
          <h4 className="view-heading">Pain points <span className="view-sub">in their words</span></h4>
          <List items={output.painPoints} empty="No pain points were voiced." quote kind="pain" sources={sources} />
        </section>
        <section aria-label="Objections">
          <h4 className="view-heading">Objections</h4>
          <List items={output.objections} empty="No objections came up." kind="objection" sources={sources} />
        </section>
        <section aria-label="Buying signals">
          <h4 className="view-heading">Buying signals</h4>
          <List items={output.buyingSignals} empty="No buying signals yet." kind="signal" sources={sources} />
        </section>
        <section aria-label="Next steps">
          <h4 className="view-heading">Next steps</h4>
          <List items={output.nextSteps} empty="No next steps were agreed." kind="next_step" sources={sources} />
        </section>
        {commitments.length > 0 && (
          <section aria-label="Commitments">
            <h4 className="view-heading">Commitments <span className="view-sub">who, what, when</span></h4>
            <ul className="bullet-list">
              {commitments.map((c, i) => (
                <li key={i}>
                  <Badge tone={c.who === 'rep' ? 'neutral' : 'green'}>{c.who === 'rep' ? 'We' : 'They'}</Badge>{' '}
                  {c.what}{c.when ? <span className="muted"> · {c.when}</span> : null}
                  <SourceLines lines={c.lines} transcript={sources.transcript} />
                </li>
              ))}
            </ul>
          </section>
        )}
      </div>
    </div>
  );
}

export function StrategyView({ output }: { output: StrategyOutput }) {
  return (
    <div className="step-view">
      <div className="angle">
        <span className="angle-label">Angle</span>
        <p>{output.angle}</p>
      </div>
      <h4 className="view-heading">Value to lead with</h4>
      <List items={output.valuePropositions} empty="None chosen." />
      <dl className="pairs">
        <div><dt>Call to action</dt><dd>{output.callToAction}</dd></div>
        <div><dt>Tone</dt><dd>{output.tone}</dd></div>
      </dl>
    </div>
  );
}
