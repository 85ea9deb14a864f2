import { EngineLimits, LanguagePair, TranslationEngine } from '../engines/translation-engine';
import { batches, splitSegments, translateUnits } from './segmentation';

/** Records what it is asked and answers upper case: enough to follow segments through. */
class RecordingEngine extends TranslationEngine {
  readonly name = 'recording';
  readonly calls: string[][] = [];
  constructor(readonly limits: EngineLimits) {
    super();
  }
  async translate(texts: string[], _languages: LanguagePair): Promise<string[]> {
    this.calls.push(texts);
    return texts.map((t) => ` ${t.toUpperCase()} `);
  }
}

describe('splitSegments', () => {
  it('keeps a short text whole', () => {
    expect(splitSegments('Hello there.', 100)).toEqual({ parts: ['Hello there.'], gaps: [''] });
  });

  it('splits at sentence ends, packs sentences up to the limit, and joins back exactly', () => {
    const text = 'One two three. Four five six.  Seven eight nine. Ten.';
    const { parts, gaps } = splitSegments(text, 32);
    expect(parts.every((p) => p.length <= 32)).toBe(true);
    expect(parts[0]).toBe('One two three. Four five six.');
    expect(parts.map((p, i) => p + gaps[i]).join('')).toBe(text);
  });

  it('splits an over-long sentence between words, and an over-long word anywhere (never inside a surrogate pair)', () => {
    const words = 'alpha beta gamma delta epsilon zeta eta theta';
    const w = splitSegments(words, 12);
    expect(w.parts.every((p) => p.length <= 12)).toBe(true);
    expect(w.parts.map((p, i) => p + w.gaps[i]).join('')).toBe(words);

    const emoji = '😀'.repeat(10);
    const e = splitSegments(emoji, 6);
    expect(e.parts.join('')).toBe(emoji);
    expect(e.parts.every((p) => !/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(p))).toBe(true);
  });
});

describe('batches', () => {
  it('respects the count and character limits, in order', () => {
    expect(batches(['aaaa', 'bb', 'cccc', 'd', 'e'], 2, 100)).toEqual([[0, 1], [2, 3], [4]]);
    expect(batches(['aaaa', 'bb', 'cccc', 'd'], 10, 6)).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(batches(['a very long one'], 10, 3)).toEqual([[0]]);
  });
});

describe('translateUnits', () => {
  it('keeps edge whitespace, skips units without letters, sends repeats once, and keeps order', async () => {
    const engine = new RecordingEngine({ maxSegmentChars: 1000, maxRequestChars: 1000, maxBatchSize: 10 });
    const out = await translateUnits(['  hello ', '', '42 %', 'hello', '\tworld\n'], engine, { source: 'en', target: 'es' });
    expect(out).toEqual(['  HELLO ', '', '42 %', 'HELLO', '\tWORLD\n']);
    expect(engine.calls).toEqual([['hello', 'world']]);
  });

  it('splits a long unit into segments within the engine limits and joins the translations in order', async () => {
    const engine = new RecordingEngine({ maxSegmentChars: 20, maxRequestChars: 45, maxBatchSize: 3 });
    const unit = 'First sentence here. Second one is here. Third sentence now. Fourth!';
    const [out] = await translateUnits([unit], engine, { source: null, target: 'de' });
    expect(out).toBe(unit.toUpperCase());
    for (const call of engine.calls) {
      expect(call.length).toBeLessThanOrEqual(3);
      expect(call.join('').length).toBeLessThanOrEqual(45);
      for (const s of call) expect(s.length).toBeLessThanOrEqual(20);
    }
    expect(engine.calls.length).toBeGreaterThan(1);
  });
});
