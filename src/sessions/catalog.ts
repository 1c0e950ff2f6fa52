import { createHash } from 'node:crypto';
import { renderMetadataBlock, type SkillManifest } from '../skills/skill-format.ts';
import { countTokens } from '../skills/token-count.ts';
import type { SkillSource, TrustLevel } from '../skills/skill-revision.ts';

/**
 * The skill catalog: what the model can see, pinned at session open. Built deterministically —
 * configured refs in the order written, then MCP prompts in registration order — capped at 20
 * entries and 1,500 tokens (the validator's tokenizer), truncated by order and never by a score.
 * Entries of untrusted skills (agent, mcp) are rendered inside an untrusted-content envelope.
 * Only the advertised metadata is ever rendered: no body reaches the catalog.
 */
export const CATALOG_ENTRY_LIMIT = 20;
export const CATALOG_TOKEN_LIMIT = 1500;

export const CATALOG_HEADER = '## Skills you can load (skill.load with a name below)';
export const UNTRUSTED_OPEN = '<untrusted-content kind="skill-metadata" trust="external_untrusted">';
export const UNTRUSTED_CLOSE = '</untrusted-content>';

/** One resolved catalog candidate: the metadata the catalog renders, and what pins it. */
export interface CatalogCandidate {
  name: string;
  revision: number;
  contentSha256: string;
  source: SkillSource;
  trust: TrustLevel;
  manifest: Pick<SkillManifest, 'name' | 'version' | 'description' | 'requiredTools'>;
}

export type DropReason = 'entry_cap' | 'token_cap';

export interface DroppedEntry {
  name: string;
  revision: number;
  source: SkillSource;
  reason: DropReason;
}

export interface Catalog {
  entries: CatalogCandidate[];
  dropped: DroppedEntry[];
  text: string;
  sha256: string;
  tokens: number;
}

/**
 * Neutralises markup inside an envelope so that untrusted text cannot close it early, and
 * folds line breaks so one entry stays one block.
 */
export function escapeUntrusted(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\s*[\r\n]+\s*/g, ' ');
}

export function renderCatalogEntry(entry: CatalogCandidate): string {
  const manifest = {
    name: entry.manifest.name,
    version: entry.manifest.version,
    description: entry.manifest.description.replace(/\s*[\r\n]+\s*/g, ' '),
    requiredTools: entry.manifest.requiredTools,
    license: '',
  };
  if (entry.trust === 'trusted_configuration') return renderMetadataBlock(manifest);
  const escaped = {
    ...manifest,
    name: escapeUntrusted(manifest.name),
    version: escapeUntrusted(manifest.version),
    description: escapeUntrusted(manifest.description),
    requiredTools: manifest.requiredTools.map(escapeUntrusted),
  };
  return [UNTRUSTED_OPEN, renderMetadataBlock(escaped), UNTRUSTED_CLOSE].join('\n');
}

export function renderCatalogText(entries: readonly CatalogCandidate[]): string {
  if (entries.length === 0) return '';
  return `${[CATALOG_HEADER, ...entries.map(renderCatalogEntry)].join('\n')}\n`;
}

export function sha256Hex(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex');
}

export interface CatalogLimits {
  entryLimit: number;
  tokenLimit: number;
}

/**
 * Builds the catalog from candidates already in catalog order (configured, then MCP). Takes the
 * longest prefix that fits both caps; everything after the first entry that does not fit is
 * dropped, with the cap that dropped it. The token count is of the whole rendered block; when
 * the entry-capped prefix is over the token cap, the longest fitting prefix is found by
 * bisection (a longer prefix never renders to fewer tokens).
 */
export function buildCatalog(
  candidates: readonly CatalogCandidate[],
  limits: CatalogLimits = { entryLimit: CATALOG_ENTRY_LIMIT, tokenLimit: CATALOG_TOKEN_LIMIT },
): Catalog {
  const measure = (count: number) => {
    const text = renderCatalogText(candidates.slice(0, count));
    return { text, tokens: countTokens(text) };
  };
  const entryCapped = Math.min(candidates.length, limits.entryLimit);
  let kept = entryCapped;
  let rendered = measure(kept);
  if (rendered.tokens > limits.tokenLimit) {
    // Invariant: prefix `low` fits, prefix `high` does not.
    let low = 0;
    let high = entryCapped;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (measure(middle).tokens <= limits.tokenLimit) low = middle;
      else high = middle;
    }
    kept = low;
    rendered = measure(kept);
  }
  const dropped: DroppedEntry[] = candidates.slice(kept).map((candidate, offset) => ({
    name: candidate.name,
    revision: candidate.revision,
    source: candidate.source,
    reason: kept + offset < entryCapped ? 'token_cap' : 'entry_cap',
  }));
  return { entries: candidates.slice(0, kept), dropped, text: rendered.text, sha256: sha256Hex(rendered.text), tokens: rendered.tokens };
}
