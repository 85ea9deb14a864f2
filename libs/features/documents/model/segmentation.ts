import { LanguagePair, TranslationEngine } from '../engines/translation-engine';

const HAS_WORDS = /[\p{L}]/u;
const EDGES = /^(\s*)([\s\S]*?)(\s*)$/;

/** A text cut into segments of at most `max` characters; `gaps[i]` is the whitespace after `parts[i]`. */
export interface Segments {
  parts: string[];
  gaps: string[];
}

/** Splits `text` (no edge whitespace) at sentence ends, else between words, else anywhere. */
export function splitSegments(text: string, max: number, language?: string): Segments {
  if (text.length <= max) return { parts: [text], gaps: [''] };
  const pieces: string[] = [];
  const sentences = new Intl.Segmenter(language, { granularity: 'sentence' }).segment(text);
  for (const { segment } of sentences) {
    if (segment.length <= max) {
      pieces.push(segment);
      continue;
    }
    for (const word of segment.split(/(?<=\s)(?=\S)/)) {
      if (word.length <= max) pieces.push(word);
      else {
        const chars = Array.from(word); // never cut a surrogate pair
        for (let i = 0; i < chars.length; i += max) pieces.push(chars.slice(i, i + max).join(''));
      }
    }
  }
  const chunks: string[] = [];
  let current = '';
  for (const piece of pieces) {
    if (current && current.length + piece.length > max) {
      chunks.push(current);
      current = '';
    }
    current += piece;
  }
  if (current) chunks.push(current);
  const parts: string[] = [];
  const gaps: string[] = [];
  for (const chunk of chunks) {
    const [, lead, core, trail] = EDGES.exec(chunk)!;
    // A chunk starting with whitespace gives it to the gap before it.
    if (lead && gaps.length > 0) gaps[gaps.length - 1] += lead;
    if (core) {
      parts.push(core);
      gaps.push(trail);
    } else if (gaps.length > 0) gaps[gaps.length - 1] += trail;
  }
  return { parts, gaps };
}

/** Batches of segment indexes that fit the engine's request limits, in order. */
export function batches(segments: string[], maxBatchSize: number, maxRequestChars: number): number[][] {
  const out: number[][] = [];
  let current: number[] = [];
  let chars = 0;
  segments.forEach((s, i) => {
    if (current.length > 0 && (current.length >= maxBatchSize || chars + s.length > maxRequestChars)) {
      out.push(current);
      current = [];
      chars = 0;
    }
    current.push(i);
    chars += s.length;
  });
  if (current.length > 0) out.push(current);
  return out;
}

/**
 * Translates a document's units through `engine`: edge whitespace is kept out of the request
 * and put back, units without letters (numbers, punctuation, blank lines) are not sent,
 * units longer than the engine takes are split into segments and joined back in order,
 * a repeated segment is sent once, and segments go in batches within the engine's limits.
 */
export async function translateUnits(units: string[], engine: TranslationEngine, languages: LanguagePair): Promise<string[]> {
  const { maxSegmentChars, maxBatchSize, maxRequestChars } = engine.limits;
  const unique: string[] = [];
  const indexOf = new Map<string, number>();
  const plans = units.map((unit) => {
    const [, lead, core, trail] = EDGES.exec(unit)!;
    if (!HAS_WORDS.test(core)) return null;
    const { parts, gaps } = splitSegments(core, maxSegmentChars, languages.source ?? undefined);
    const refs = parts.map((p) => {
      let at = indexOf.get(p);
      if (at === undefined) {
        at = unique.push(p) - 1;
        indexOf.set(p, at);
      }
      return at;
    });
    return { lead, trail, refs, gaps };
  });

  const translated: string[] = new Array(unique.length);
  for (const batch of batches(unique, maxBatchSize, maxRequestChars)) {
    const answers = await engine.translate(
      batch.map((i) => unique[i]),
      languages,
    );
    batch.forEach((i, k) => (translated[i] = answers[k].trim()));
  }

  return units.map((unit, u) => {
    const plan = plans[u];
    if (!plan) return unit;
    return plan.lead + plan.refs.map((ref, k) => translated[ref] + plan.gaps[k]).join('') + plan.trail;
  });
}
