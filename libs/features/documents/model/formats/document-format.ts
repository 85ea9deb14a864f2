/** The formats a document can be sent in; the translation comes back in the same one. */
export const DOCUMENT_FORMATS = ['text', 'markdown', 'html', 'docx'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

/** The media type each format is stored and answered with (text formats are always UTF-8). */
export const MEDIA_TYPES: Readonly<Record<DocumentFormat, string>> = {
  text: 'text/plain',
  markdown: 'text/markdown',
  html: 'text/html',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

export const isTextFormat = (f: DocumentFormat): boolean => f !== 'docx';

/**
 * A document opened for translation: the pieces of text an engine should translate, in order,
 * and how to put translations of those pieces back. Everything that is not in `units` (markup,
 * code, formatting, other parts of a package) is carried over untouched by `rebuild`.
 */
export interface TranslatableDocument {
  units: string[];
  rebuild(translated: string[]): Promise<Buffer> | Buffer;
}

export interface FormatHandler {
  readonly format: DocumentFormat;
  open(content: Buffer): Promise<TranslatableDocument>;
}

/** The content cannot be processed as its format (a corrupt package, an oversized part): not worth retrying. */
export class DocumentContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DocumentContentError';
  }
}

const BOM = '\ufeff';

/** UTF-8 text without its byte order mark, and the mark to put back. */
export function decodeUtf8(content: Buffer): { text: string; bom: string } {
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(content);
  return text.startsWith(BOM) ? { text: text.slice(1), bom: BOM } : { text, bom: '' };
}
