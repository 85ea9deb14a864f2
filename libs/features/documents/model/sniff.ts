import JSZip from 'jszip';
import { DocumentFile, documentFileFromBuffer, SNIFF_HEAD_BYTES } from './document-file';
import { DocumentContentError, DocumentFormat } from './formats/document-format';
import { docxTextParts } from './formats/docx.format';

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const TEXT_EXTENSIONS: Readonly<Record<string, DocumentFormat>> = {
  txt: 'text',
  text: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
};
/** Declared types that may break a tie when the name has no extension (never decide alone). */
const DECLARED_TEXT: Readonly<Record<string, DocumentFormat>> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
};

export type Sniffed = { ok: true; format: DocumentFormat } | { ok: false; reason: string };

const extensionOf = (name: string | null): string | null => {
  const m = /\.([A-Za-z0-9]{1,10})$/.exec(name ?? '');
  return m ? m[1].toLowerCase() : null;
};

/** HTML recognised from the content itself (its first SNIFF_HEAD_BYTES bytes; for a file sent without an extension). */
const looksLikeHtml = (head: Buffer): boolean =>
  /^(?:\ufeff)?\s*(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html[\s>])/i.test(head.subarray(0, SNIFF_HEAD_BYTES).toString('utf8'));

/**
 * Decides a file's format from its bytes and its name: a zip (by its magic bytes) must be a
 * Word .docx package (by its content types); anything else must be valid UTF-8 without NUL
 * bytes, and then the extension chooses plain text, Markdown or HTML. Without an extension the
 * content decides (an HTML document), then the declared type, then plain text. The declared
 * type alone never makes a file acceptable: a binary file declared text/plain is refused.
 * Only a zip is read whole; anything else is decided from what was learnt while it streamed in.
 */
export async function sniffFormat(content: Buffer | DocumentFile, name: string | null, declaredType: string | null): Promise<Sniffed> {
  const file = Buffer.isBuffer(content) ? documentFileFromBuffer(content) : content;
  const ext = extensionOf(name);
  if (file.head.subarray(0, 4).equals(ZIP_MAGIC)) {
    if (ext !== null && ext !== 'docx') {
      return { ok: false, reason: `A zip package named ".${ext}" is not supported; of zip-based formats only Word .docx is.` };
    }
    try {
      await docxTextParts(await JSZip.loadAsync(await file.readAll()));
      return { ok: true, format: 'docx' };
    } catch (err) {
      const why = err instanceof DocumentContentError ? err.message : 'the zip package cannot be read.';
      return { ok: false, reason: `Only Word .docx packages are supported among zip files: ${why}` };
    }
  }
  if (ext === 'docx') return { ok: false, reason: 'The file is named .docx but is not a zip package.' };
  if (file.containsNul || !file.validUtf8) {
    return {
      ok: false,
      reason: 'The file is neither a .docx package nor UTF-8 text. Supported: plain text, Markdown and HTML in UTF-8, and Word .docx.',
    };
  }
  if (ext !== null) {
    const format = TEXT_EXTENSIONS[ext];
    if (!format) return { ok: false, reason: `Files named ".${ext}" are not supported. Supported: .txt, .md, .markdown, .html, .htm and .docx.` };
    return { ok: true, format };
  }
  if (looksLikeHtml(file.head)) return { ok: true, format: 'html' };
  const declared = (declaredType ?? '').split(';')[0].trim().toLowerCase();
  return { ok: true, format: DECLARED_TEXT[declared] ?? 'text' };
}
