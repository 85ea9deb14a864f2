import { decodeUtf8, FormatHandler, TranslatableDocument } from './document-format';

const LINE_BREAK = /(\r\n|\n|\r)/;

/**
 * Plain text, line by line: every line is a unit and every line break is kept as it was
 * (`\n`, `\r\n` or `\r`), so the translation has exactly the original's lines and blank lines.
 */
export class PlainTextFormat implements FormatHandler {
  readonly format = 'text' as const;

  async open(content: Buffer): Promise<TranslatableDocument> {
    const { text, bom } = decodeUtf8(content);
    // Odd indexes are the separators (the split keeps them).
    const parts = text.split(LINE_BREAK);
    const lines = parts.filter((_, i) => i % 2 === 0);
    return {
      units: lines,
      rebuild: (translated) => Buffer.from(bom + parts.map((p, i) => (i % 2 === 0 ? translated[i / 2] : p)).join(''), 'utf8'),
    };
  }
}
