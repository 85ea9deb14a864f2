import { breakableText, breakableUrl } from './breakable';

/** Where a line may break: the text between the `<wbr>` marks, unescaped. */
const pieces = (html: string) =>
  html
    .replace(/<span class="(host|part)">|<\/span>/g, '')
    .split('<wbr>')
    .map((p) => p.replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c))));

describe('addresses that wrap at / (never mid-host)', () => {
  it('may break after the scheme and after each / of the path, keeping the host whole', () => {
    expect(pieces(breakableUrl('https://hooks.partner-systems.example.com/interpreting/v2/events'))).toEqual([
      'https://',
      'hooks.partner-systems.example.com/',
      'interpreting/',
      'v2/',
      'events',
    ]);
    expect(pieces(breakableUrl('https://127.0.0.1:8443'))).toEqual(['https://', '127.0.0.1:8443']);
  });

  it('marks the host, which the stylesheet keeps whole (its hyphens are no place to break)', () => {
    expect(breakableUrl('https://partner-systems.example.com/a-b')).toBe(
      'https://<wbr><span class="host">partner-systems.example.com/</span><wbr><span class="part">a-b</span>',
    );
  });

  it('may break before a query, each of its parameters and a fragment', () => {
    expect(pieces(breakableUrl('https://h.example/a?x=1&y=2#top'))).toEqual(['https://', 'h.example/', 'a', '?x', '=1', '&y', '=2', '#top']);
    expect(pieces(breakableUrl('https://h.example?x=1'))).toEqual(['https://', 'h.example', '?x', '=1']);
  });

  it('escapes what it shows, so a stored address cannot open markup', () => {
    const html = breakableUrl('https://h.example/"><script>alert(1)</script>');
    expect(html).not.toMatch(/<(?!wbr>|span class="(host|part)">|\/span>)/);
    expect(pieces(html).join('')).toBe('https://h.example/"><script>alert(1)</script>');
    expect(breakableUrl('not a url <b>')).toBe('<span class="host">not a url &#60;b&#62;</span>');
    expect(breakableUrl('')).toBe('');
  });

  it('marks the addresses inside a sentence and escapes the rest', () => {
    const html = breakableText('Nothing more is sent to https://h.example/a/b, & that is "final".');
    expect(pieces(html)).toEqual(['Nothing more is sent to https://', 'h.example/', 'a/', 'b, & that is "final".']);
    expect(html).toContain('&#38; that is &#34;final&#34;.');
    expect(breakableText('Deliveries to <none>')).toBe('Deliveries to &#60;none&#62;');
  });
});
