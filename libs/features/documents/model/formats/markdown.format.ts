import { decodeUtf8, FormatHandler, TranslatableDocument } from './document-format';

/** A piece of a line: prose to translate, or syntax to carry over as it is. */
type Piece = { text: string; translate: boolean };

const LINE_BREAK = /(\r\n|\n|\r)/;
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
const BLANK = /^[ \t]*$/;
const INDENTED_CODE = /^(?: {4}|\t)/;
const THEMATIC_OR_SETEXT = /^ {0,3}(?:(?:([-*_])(?:[ \t]*\1){2,})|=+|-+)[ \t]*$/;
const LINK_DEFINITION = /^ {0,3}\[[^\]]+\]:[ \t]*\S/;
const TABLE_DELIMITER = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const HTML_BLOCK =
  /^ {0,3}(?:<!--|<\?|<![A-Z]|<\/?(?:address|article|aside|blockquote|body|details|dialog|div|dl|fieldset|figcaption|figure|footer|form|h[1-6]|head|header|hr|html|iframe|li|main|nav|ol|p|pre|script|section|style|summary|table|tbody|td|tfoot|th|thead|tr|ul)(?:[\s/>]|$))/i;
/** Block prefixes, taken one after another: blockquote, list item, task box, heading. */
const PREFIXES = [/^ {0,3}> ?/, /^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)/, /^\[[ xX]\][ \t]+/, /^ {0,3}#{1,6}(?:[ \t]+|$)/];
const LIST_ITEM = /^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)/;
const HEADING = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const HEADING_CLOSE = /[ \t]+#+[ \t]*$/;

/** Inline syntax carried over untouched (code spans are found by hand: their fences must match). */
const INLINE_SYNTAX = new RegExp(
  [
    /\\[!-/:-@[-`{-~]/.source, // backslash escape
    /\\$/.source, // hard line break
    /<(?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*|[^\s@<>]+@[^\s@<>]+)>/.source, // autolink
    /<!--[\s\S]*?-->/.source, // HTML comment
    /<\/?[A-Za-z][A-Za-z0-9-]*(?:\s+[^<>]*?)?\/?>/.source, // inline HTML tag
    /\]\((?:[^()\s]|\([^()\s]*\))*(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^)]*\)))?[ \t]*\)/.source, // ](destination "title")
    /\]\[[^\]]*\]/.source, // ][reference]
    /!?\[|\]/.source, // link and image brackets
    /\*+|~~+|(?<![\p{L}\p{N}])_+|_+(?![\p{L}\p{N}])/u.source, // emphasis, strike-through
    /(?:https?:\/\/|www\.)[^\s<]*[^\s<.,:;"')\]]/.source, // bare URL
    /&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/.source, // entity
    /\|/.source, // table cell separator
  ].join('|'),
  'uy',
);

/** Splits inline Markdown into prose and syntax. */
export function inlinePieces(text: string): Piece[] {
  const pieces: Piece[] = [];
  let prose = '';
  const syntax = (s: string) => {
    if (prose) pieces.push({ text: prose, translate: true });
    prose = '';
    pieces.push({ text: s, translate: false });
  };
  let i = 0;
  while (i < text.length) {
    if (text[i] === '`') {
      let n = 1;
      while (text[i + n] === '`') n++;
      const fence = '`'.repeat(n);
      let close = text.indexOf(fence, i + n);
      while (close !== -1 && text[close + n] === '`') {
        let skip = close;
        while (text[skip] === '`') skip++;
        close = text.indexOf(fence, skip);
      }
      const end = close === -1 ? i + n : close + n;
      syntax(text.slice(i, end));
      i = end;
      continue;
    }
    INLINE_SYNTAX.lastIndex = i;
    const m = INLINE_SYNTAX.exec(text);
    if (m && m[0].length > 0) {
      syntax(m[0]);
      i += m[0].length;
    } else {
      prose += text[i];
      i++;
    }
  }
  if (prose) pieces.push({ text: prose, translate: true });
  return pieces;
}

/**
 * Markdown with its structure kept: only prose is sent for translation. Front matter, fenced and
 * indented code, HTML blocks, link definitions, rules and table delimiter rows are carried over
 * as they are; in other lines the block markers (quotes, list markers, task boxes, heading
 * hashes) and inline syntax (code spans, link destinations, brackets, emphasis markers, HTML
 * tags, autolinks and bare URLs, escapes, entities, cell pipes) are kept, and the prose between
 * them is translated. Prose broken by inline syntax is translated in pieces: the price of never
 * letting an engine rewrite syntax.
 */
export class MarkdownFormat implements FormatHandler {
  readonly format = 'markdown' as const;

  async open(content: Buffer): Promise<TranslatableDocument> {
    const { text, bom } = decodeUtf8(content);
    const parts = text.split(LINE_BREAK);
    const lines = parts.filter((_, i) => i % 2 === 0);
    const breaks = parts.filter((_, i) => i % 2 === 1);
    const pieces = this.classify(lines);
    const units = pieces.filter((p) => p.translate).map((p) => p.text);
    return {
      units,
      rebuild: (translated) => {
        let next = 0;
        const out = pieces.map((p) => (p.translate ? translated[next++] : p.text));
        // Line breaks are syntax pieces too: classify() marks them with `lineEnd`.
        return Buffer.from(bom + this.join(out, pieces, breaks), 'utf8');
      },
    };
  }

  private join(out: string[], pieces: Array<Piece & { lineEnd?: boolean }>, breaks: string[]): string {
    let text = '';
    let line = 0;
    pieces.forEach((p, i) => {
      text += out[i];
      if (p.lineEnd && line < breaks.length) text += breaks[line++];
    });
    return text;
  }

  /** Every line as pieces; the last piece of each line carries `lineEnd`. */
  private classify(lines: string[]): Array<Piece & { lineEnd?: boolean }> {
    const all: Array<Piece & { lineEnd?: boolean }> = [];
    let fence: { char: string; length: number } | null = null;
    let frontMatter = lines[0] === '---';
    let htmlBlock = false;
    let prevBlank = true;
    let prevCode = false;
    let inList = false;

    lines.forEach((line, index) => {
      let linePieces: Piece[];
      if (frontMatter) {
        linePieces = [{ text: line, translate: false }];
        if (index > 0 && (line === '---' || line === '...')) frontMatter = false;
      } else if (fence) {
        linePieces = [{ text: line, translate: false }];
        const close = new RegExp(`^ {0,3}${fence.char === '`' ? '`' : '~'}{${fence.length},}[ \\t]*$`);
        if (close.test(line)) fence = null;
      } else if (FENCE_OPEN.test(line)) {
        const run = FENCE_OPEN.exec(line)![1];
        fence = { char: run[0], length: run.length };
        linePieces = [{ text: line, translate: false }];
      } else if (BLANK.test(line)) {
        linePieces = [{ text: line, translate: false }];
        htmlBlock = false;
      } else if (htmlBlock || HTML_BLOCK.test(line)) {
        htmlBlock = true;
        linePieces = [{ text: line, translate: false }];
      } else if (INDENTED_CODE.test(line) && (prevBlank || prevCode) && !inList) {
        linePieces = [{ text: line, translate: false }];
        prevCode = true;
        prevBlank = false;
        all.push(...this.endLine(linePieces));
        return;
      } else if (LINK_DEFINITION.test(line) || THEMATIC_OR_SETEXT.test(line) || (line.includes('|') && TABLE_DELIMITER.test(line))) {
        linePieces = [{ text: line, translate: false }];
      } else {
        if (LIST_ITEM.test(line)) inList = true;
        else if (prevBlank && !/^[ \t]/.test(line)) inList = false;
        linePieces = this.proseLine(line);
      }
      prevBlank = BLANK.test(line);
      prevCode = false;
      all.push(...this.endLine(linePieces));
    });
    return all;
  }

  private endLine(pieces: Piece[]): Array<Piece & { lineEnd?: boolean }> {
    const list: Array<Piece & { lineEnd?: boolean }> = pieces.length > 0 ? [...pieces] : [{ text: '', translate: false }];
    list[list.length - 1] = { ...list[list.length - 1], lineEnd: true };
    return list;
  }

  /** Block markers first, then inline pieces; a heading's closing hashes stay. */
  private proseLine(line: string): Piece[] {
    const pieces: Piece[] = [];
    let rest = line;
    const isHeading = (s: string) => HEADING.test(s);
    for (let progress = true; progress;) {
      progress = false;
      for (const prefix of PREFIXES) {
        const m = prefix.exec(rest);
        if (m && m[0].length > 0) {
          pieces.push({ text: m[0], translate: false });
          rest = rest.slice(m[0].length);
          progress = true;
          if (isHeading(m[0])) break;
        }
      }
    }
    let tail = '';
    if (pieces.some((p) => isHeading(p.text))) {
      const close = HEADING_CLOSE.exec(rest);
      if (close) {
        tail = close[0];
        rest = rest.slice(0, close.index);
      }
    }
    pieces.push(...inlinePieces(rest));
    if (tail) pieces.push({ text: tail, translate: false });
    return pieces;
  }
}
