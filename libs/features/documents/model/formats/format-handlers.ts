import { DocumentFormat, FormatHandler } from './document-format';
import { DocxFormat } from './docx.format';
import { HtmlFormat } from './html.format';
import { MarkdownFormat } from './markdown.format';
import { PlainTextFormat } from './plain-text.format';

/** The handler of each format (they hold no state). */
export const FORMAT_HANDLERS: Readonly<Record<DocumentFormat, FormatHandler>> = {
  text: new PlainTextFormat(),
  markdown: new MarkdownFormat(),
  html: new HtmlFormat(),
  docx: new DocxFormat(),
};
