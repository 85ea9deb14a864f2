import JSZip from 'jszip';
import { buildDocx, DOCX_TEXT_PARTS, runTexts, withoutText } from '../../../../../test/support/docx-fixture';
import { DocumentContentError } from './document-format';
import { DocxFormat, readPart } from './docx.format';

describe('DocxFormat', () => {
  it('finds the text of runs read together, in every text part, in order', async () => {
    const doc = await new DocxFormat().open(await buildDocx());
    expect(doc.units).toEqual([
      'Annual report',
      'The cat is black.',
      ' Bold words',
      'after a tab',
      'Visit ',
      'our website',
      '.',
      '2026',
      'First cell',
      'Second cell',
      ' A picture caption',
      'Text in a box',
      'Inserted text',
      'Confidential header',
      'Page footer ',
      ' A footnote.',
    ]);
  });

  it('rewrites only <w:t> contents; every other part comes back byte for byte', async () => {
    const original = await buildDocx();
    const doc = await new DocxFormat().open(original);
    const out = await doc.rebuild(doc.units.map((u) => u.toUpperCase()));
    const [a, b] = await Promise.all([JSZip.loadAsync(original), JSZip.loadAsync(out)]);
    expect(Object.keys(b.files).sort()).toEqual(Object.keys(a.files).sort());
    for (const name of Object.keys(a.files).filter((n) => !a.files[n].dir)) {
      const before = await a.file(name)!.async('nodebuffer');
      const after = await b.file(name)!.async('nodebuffer');
      if (DOCX_TEXT_PARTS.includes(name)) expect(withoutText(after.toString('utf8'))).toBe(withoutText(before.toString('utf8')));
      else expect(after.equals(before)).toBe(true);
    }
    const body = runTexts(await b.file('word/document.xml')!.async('string'));
    expect(body.slice(0, 4)).toEqual(['ANNUAL REPORT', 'THE CAT IS BLACK.', '', '']);
    expect(await b.file('word/document.xml')!.async('string')).toMatch(/^<\?xml version="1.0" encoding="UTF-8" standalone="yes"\?>\r\n<w:document /);
    expect(runTexts(await b.file('word/footer1.xml')!.async('string'))).toEqual(['PAGE FOOTER ']);
  });

  it('refuses what is not a Word package', async () => {
    const zip = new JSZip();
    zip.file('hello.txt', 'hi');
    await expect(new DocxFormat().open(await zip.generateAsync({ type: 'nodebuffer' }))).rejects.toThrow(DocumentContentError);
    await expect(new DocxFormat().open(Buffer.from('PK\x03\x04 broken'))).rejects.toThrow(DocumentContentError);
  });
});

describe('readPart', () => {
  it('gives up on a part that unzips past the limit (a zip bomb), whatever size the zip records', async () => {
    const zip = new JSZip();
    zip.file('big.xml', 'a'.repeat(5 * 1024 * 1024));
    const loaded = await JSZip.loadAsync(await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }));
    await expect(readPart(loaded.file('big.xml')!, 1024 * 1024)).rejects.toThrow('larger than 1048576 bytes unzipped');
    expect(await readPart(loaded.file('big.xml')!, 6 * 1024 * 1024)).toHaveLength(5 * 1024 * 1024);
  });
});
