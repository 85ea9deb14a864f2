import { checkLanguage } from './languages';

describe('checkLanguage', () => {
  it('answers the canonical form of supported tags', () => {
    expect(checkLanguage('en')).toEqual({ ok: true, tag: 'en' });
    expect(checkLanguage('EN-gb')).toEqual({ ok: true, tag: 'en-GB' });
    expect(checkLanguage('zh-hant')).toEqual({ ok: true, tag: 'zh-Hant' });
    expect(checkLanguage(' pt-BR ')).toEqual({ ok: true, tag: 'pt-BR' });
  });

  it('refuses malformed tags, unsupported languages and variants, and non-strings', () => {
    expect(checkLanguage('english')).toMatchObject({ ok: false, problem: expect.stringContaining('not a supported language') });
    expect(checkLanguage('en_GB')).toMatchObject({ ok: false, problem: expect.stringContaining('not a well-formed BCP 47') });
    expect(checkLanguage('x')).toMatchObject({ ok: false, problem: expect.stringContaining('not a well-formed') });
    expect(checkLanguage('tlh')).toMatchObject({ ok: false, problem: expect.stringContaining('"tlh" is not a supported language') });
    expect(checkLanguage('en-AU')).toMatchObject({ ok: false });
    expect(checkLanguage('')).toMatchObject({ ok: false, problem: expect.stringContaining('BCP 47') });
    expect(checkLanguage(12)).toMatchObject({ ok: false });
  });
});
