import JSZip from 'jszip';
import { buildDocx } from '../../../../test/support/docx-fixture';
import { sniffFormat } from './sniff';

const text = (s: string) => Buffer.from(s, 'utf8');

describe('sniffFormat', () => {
  it('takes a Word package by its content, whatever it is called or declared', async () => {
    const docx = await buildDocx();
    expect(await sniffFormat(docx, 'report.docx', 'application/octet-stream')).toEqual({ ok: true, format: 'docx' });
    expect(await sniffFormat(docx, null, 'text/plain')).toEqual({ ok: true, format: 'docx' });
  });

  it('refuses other zip packages and a .docx that is not one', async () => {
    const zip = new JSZip();
    zip.file('xl/workbook.xml', '<workbook/>');
    const xlsx = await zip.generateAsync({ type: 'nodebuffer' });
    expect(await sniffFormat(xlsx, 'sheet.docx', null)).toMatchObject({ ok: false });
    expect(await sniffFormat(xlsx, 'sheet.xlsx', null)).toMatchObject({ ok: false, reason: expect.stringContaining('.xlsx') });
    expect(await sniffFormat(text('plain words'), 'fake.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document')).toMatchObject({
      ok: false,
    });
  });

  it('takes UTF-8 text by extension, and refuses binary or non-UTF-8 bytes whatever the declared type', async () => {
    expect(await sniffFormat(text('# Title'), 'notes.md', 'application/pdf')).toEqual({ ok: true, format: 'markdown' });
    expect(await sniffFormat(text('<p>x</p>'), 'page.HTM', null)).toEqual({ ok: true, format: 'html' });
    expect(await sniffFormat(text('<p>x</p>'), 'page.txt', 'text/html')).toEqual({ ok: true, format: 'text' });
    expect(await sniffFormat(text('a,b'), 'data.csv', 'text/plain')).toMatchObject({ ok: false, reason: expect.stringContaining('.csv') });
    expect(await sniffFormat(Buffer.from([0x25, 0x50, 0x44, 0x46, 0x2d, 0xe2, 0xe3]), 'doc.txt', 'text/plain')).toMatchObject({ ok: false });
    expect(await sniffFormat(Buffer.from('caf\xe9', 'latin1'), 'latin1.txt', 'text/plain')).toMatchObject({ ok: false });
    expect(await sniffFormat(Buffer.from([0x68, 0x00, 0x69]), 'nul.txt', null)).toMatchObject({ ok: false });
  });

  it('without an extension: HTML by its content, then the declared type, then plain text', async () => {
    expect(await sniffFormat(text('\ufeff<!-- c -->\n<!DOCTYPE html><html>'), null, null)).toEqual({ ok: true, format: 'html' });
    expect(await sniffFormat(text('# Title'), 'README', 'text/markdown; charset=utf-8')).toEqual({ ok: true, format: 'markdown' });
    expect(await sniffFormat(text('hello'), null, 'image/png')).toEqual({ ok: true, format: 'text' });
  });
});
