import { HtmlFormat } from './html.format';
import { inlinePieces, MarkdownFormat } from './markdown.format';
import { PlainTextFormat } from './plain-text.format';

const upper = async (handler: { open(b: Buffer): Promise<{ units: string[]; rebuild(t: string[]): Promise<Buffer> | Buffer }> }, text: string) => {
  const doc = await handler.open(Buffer.from(text, 'utf8'));
  return { units: doc.units, out: (await doc.rebuild(doc.units.map((u) => u.toUpperCase()))).toString('utf8') };
};

describe('PlainTextFormat', () => {
  it('translates line by line and keeps every line break as it was, and the BOM', async () => {
    const text = '\ufeffFirst line\r\nsecond line\n\nthird\rlast';
    const { units, out } = await upper(new PlainTextFormat(), text);
    expect(units).toEqual(['First line', 'second line', '', 'third', 'last']);
    expect(out).toBe('\ufeffFIRST LINE\r\nSECOND LINE\n\nTHIRD\rLAST');
  });
});

describe('MarkdownFormat', () => {
  it('keeps code, front matter, tables, links and markers; translates the prose', async () => {
    const md = [
      '---',
      'title: keep me',
      '---',
      '# A heading #',
      '',
      'Some *emphasis* and `code span` with [a link](https://example.com/path "title") here.',
      '',
      '```js',
      'const x = "do not translate";',
      '```',
      '',
      '    indented code stays',
      '',
      '> quoted text',
      '- item one',
      '  1. nested item',
      '- [x] done task',
      '',
      '| Name | Value |',
      '|:-----|------:|',
      '| cell a | cell b |',
      '',
      '![alt text](img.png) see <https://auto.link> and https://bare.example/x or snake_case_name.',
      '[ref]: https://example.com',
      '<div class="x">html block</div>',
      '',
      'Last line\\',
    ].join('\n');
    const { out } = await upper(new MarkdownFormat(), md);
    expect(out).toBe(
      [
        '---',
        'title: keep me',
        '---',
        '# A HEADING #',
        '',
        'SOME *EMPHASIS* AND `code span` WITH [A LINK](https://example.com/path "title") HERE.',
        '',
        '```js',
        'const x = "do not translate";',
        '```',
        '',
        '    indented code stays',
        '',
        '> QUOTED TEXT',
        '- ITEM ONE',
        '  1. NESTED ITEM',
        '- [x] DONE TASK',
        '',
        '| NAME | VALUE |',
        '|:-----|------:|',
        '| CELL A | CELL B |',
        '',
        '![ALT TEXT](img.png) SEE <https://auto.link> AND https://bare.example/x OR SNAKE_CASE_NAME.',
        '[ref]: https://example.com',
        '<div class="x">html block</div>',
        '',
        'LAST LINE\\',
      ].join('\n'),
    );
  });

  it('matches code span fences by length', () => {
    expect(inlinePieces('a ``code ` tick`` b')).toEqual([
      { text: 'a ', translate: true },
      { text: '``code ` tick``', translate: false },
      { text: ' b', translate: true },
    ]);
  });
});

describe('HtmlFormat', () => {
  it('translates text nodes and word-bearing attributes only; markup, comments, scripts and styles come back byte for byte', async () => {
    const html = [
      '<!DOCTYPE html>',
      '<html lang="en"><head><meta charset="utf-8"><title>Page title</title>',
      '<meta name="description" content="A description">',
      '<style>p { color: red; } /* text */</style>',
      '<script>var s = "<p>not text</p>";</script></head>',
      '<body class=main>',
      '<!-- a comment -->',
      '<p id="p1" title=\'Tip "quoted"\'>Hello &amp; welcome, <b>friend</b>!</p>',
      '<img src="a.png" alt=unquoted data-x="keep">',
      '<input type="submit" value="Send"><input type="text" value="typed">',
      '<p translate="no">Brand Name</p><span class="notranslate">Keep</span>',
      '<pre><code>code();</code></pre>',
      '<div translate="no"><span translate="yes">back on</span></div>',
      '</body></html>',
    ].join('\n');
    const { units, out } = await upper(new HtmlFormat(), html);
    expect(units).toEqual(['Page title', 'A description', 'Tip "quoted"', 'Hello & welcome, ', 'friend', '!', 'unquoted', 'Send', 'back on']);
    expect(out).toBe(
      [
        '<!DOCTYPE html>',
        '<html lang="en"><head><meta charset="utf-8"><title>PAGE TITLE</title>',
        '<meta name="description" content="A DESCRIPTION">',
        '<style>p { color: red; } /* text */</style>',
        '<script>var s = "<p>not text</p>";</script></head>',
        '<body class=main>',
        '<!-- a comment -->',
        '<p id="p1" title=\'TIP "QUOTED"\'>HELLO &amp; WELCOME, <b>FRIEND</b>!</p>',
        '<img src="a.png" alt="UNQUOTED" data-x="keep">',
        '<input type="submit" value="SEND"><input type="text" value="typed">',
        '<p translate="no">Brand Name</p><span class="notranslate">Keep</span>',
        '<pre><code>code();</code></pre>',
        '<div translate="no"><span translate="yes">BACK ON</span></div>',
        '</body></html>',
      ].join('\n'),
    );
  });

  it('escapes what a translation brings into text and attributes', async () => {
    const doc = await new HtmlFormat().open(Buffer.from('<p title="t">x</p>'));
    const out = (await doc.rebuild(['a "b" & c', '<i>&</i>'])).toString();
    expect(out).toBe('<p title="a &quot;b&quot; &amp; c">&lt;i&gt;&amp;&lt;/i&gt;</p>');
  });
});

describe('HtmlFormat, untranslated text', () => {
  it('keeps the source bytes (entities included) of text that was not translated', async () => {
    const doc = await new HtmlFormat().open(Buffer.from('<p>&copy;&nbsp;2026</p><p>Hi &amp; bye</p>'));
    expect(doc.units).toEqual(['©\u00a02026', 'Hi & bye']);
    const out = (await doc.rebuild(['©\u00a02026', 'HI & BYE'])).toString();
    expect(out).toBe('<p>&copy;&nbsp;2026</p><p>HI &amp; BYE</p>');
  });
});
