import { Document, DOMParser, Element, Node, XMLSerializer } from '@xmldom/xmldom';
import JSZip from 'jszip';
import { DocumentContentError, FormatHandler, TranslatableDocument } from './document-format';

export const W_NS = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const CT_BASE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.';
/** The main part of a .docx (not a template, not macro-enabled). */
export const DOCX_MAIN_CONTENT_TYPE = `${CT_BASE}document.main+xml`;
/** Parts whose runs are translated: the body, headers, footers, footnotes and endnotes. */
const TEXT_PART_TYPES = new Set([DOCX_MAIN_CONTENT_TYPE, `${CT_BASE}header+xml`, `${CT_BASE}footer+xml`, `${CT_BASE}footnotes+xml`, `${CT_BASE}endnotes+xml`]);
/** A part larger than this once unzipped is refused (a zip bomb, not a document). */
export const MAX_PART_BYTES = 64 * 1024 * 1024;
const MAX_CONTENT_TYPES_BYTES = 1024 * 1024;

/** Elements that wrap runs without changing how they read (a group may not span their edge). */
const RUN_CONTAINERS = new Set(['w:hyperlink', 'w:ins', 'w:moveTo', 'w:smartTag', 'w:sdt', 'w:sdtContent', 'w:fldSimple', 'w:customXml', 'w:dir', 'w:bdo']);
/** Markers between runs that do not interrupt the text (proofing, bookmarks, comment ranges). */
const TRANSPARENT = new Set([
  'w:pPr',
  'w:rPr',
  'w:proofErr',
  'w:bookmarkStart',
  'w:bookmarkEnd',
  'w:permStart',
  'w:permEnd',
  'w:commentRangeStart',
  'w:commentRangeEnd',
  'w:lastRenderedPageBreak',
  'w:moveFromRangeStart',
  'w:moveFromRangeEnd',
  'w:moveToRangeStart',
  'w:moveToRangeEnd',
]);

const elements = (node: Node): Element[] => Array.from(node.childNodes).filter((n): n is Element => n.nodeType === 1);

/** What [Content_Types].xml says about the package: the parts with runs to translate. */
export async function docxTextParts(zip: JSZip): Promise<string[]> {
  const types = zip.file('[Content_Types].xml');
  if (!types) throw new DocumentContentError('The package has no [Content_Types].xml: it is not a .docx file.');
  const xml = new DOMParser().parseFromString(await readPart(types, MAX_CONTENT_TYPES_BYTES), 'text/xml');
  const parts: string[] = [];
  let main = false;
  for (const o of Array.from(xml.getElementsByTagName('Override'))) {
    const type = o.getAttribute('ContentType') ?? '';
    const name = (o.getAttribute('PartName') ?? '').replace(/^\//, '');
    if (type === DOCX_MAIN_CONTENT_TYPE) main = true;
    if (TEXT_PART_TYPES.has(type) && zip.file(name)) parts.push(name);
  }
  if (!main) throw new DocumentContentError('The package has no main Word document part: it is not a .docx file.');
  return parts;
}

/**
 * A part's text, unzipped as a stream and given up past `max` bytes: the size a zip records can
 * lie, and a small package can unzip to gigabytes.
 */
export function readPart(file: JSZip.JSZipObject, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const stream = file.nodeStream('nodebuffer');
    stream.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > max) {
        done = true;
        stream.pause();
        chunks.length = 0;
        return reject(new DocumentContentError(`The part ${file.name} is larger than ${max} bytes unzipped.`));
      }
      chunks.push(chunk);
    });
    stream.on('end', () => !done && resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', (err: Error) => !done && reject(new DocumentContentError(`The part ${file.name} cannot be unzipped: ${err.message}`)));
  });
}

/**
 * A run of text pieces that read as one: consecutive `<w:t>` of runs with identical run
 * properties, under the same parent, with nothing but proofing and bookmark marks between them
 * (Word splits runs for revision ids and spell-checking, which must not split a sentence).
 */
type Group = { key: string; parent: Node; texts: Element[] };

function paragraphGroups(p: Element, serializer: XMLSerializer): Group[] {
  const groups: Group[] = [];
  let current: Group | null = null;
  const close = () => {
    if (current) groups.push(current);
    current = null;
  };
  const visit = (container: Element) => {
    for (const child of elements(container)) {
      const name = child.nodeName;
      if (name === 'w:r') {
        const rPr = elements(child).find((e) => e.nodeName === 'w:rPr');
        const key = rPr ? serializer.serializeToString(rPr) : '';
        for (const part of elements(child)) {
          if (part.nodeName === 'w:t') {
            if (current && current.key === key && current.parent === container) current.texts.push(part);
            else {
              close();
              current = { key, parent: container, texts: [part] };
            }
          } else if (!TRANSPARENT.has(part.nodeName)) close();
        }
      } else if (RUN_CONTAINERS.has(name)) {
        close();
        visit(child);
        close();
      } else if (!TRANSPARENT.has(name)) close();
    }
  };
  visit(p);
  close();
  return groups;
}

/**
 * DOCX: the text of runs is translated in place in the body, headers, footers, footnotes and
 * endnotes; every other part of the package (styles, numbering, media, relationships, settings)
 * is carried over byte for byte, and in the rewritten parts only `<w:t>` contents change. A
 * group's translation goes into its first `<w:t>` and the others are emptied, so run
 * formatting survives; formatting changes inside a sentence split it into separately
 * translated pieces.
 */
export class DocxFormat implements FormatHandler {
  readonly format = 'docx' as const;

  async open(content: Buffer): Promise<TranslatableDocument> {
    let zip: JSZip;
    try {
      zip = await JSZip.loadAsync(content);
    } catch (err) {
      throw new DocumentContentError(`The .docx package cannot be read: ${(err as Error).message}`);
    }
    const serializer = new XMLSerializer();
    const docs: Array<{ name: string; xml: Document; groups: Group[] }> = [];
    for (const name of await docxTextParts(zip)) {
      const source = await readPart(zip.file(name)!, MAX_PART_BYTES);
      const xml = parseXml(source, name);
      const groups = Array.from(xml.getElementsByTagNameNS(W_NS, 'p')).flatMap((p) => paragraphGroups(p, serializer));
      docs.push({ name, xml, groups });
    }
    const groups = docs.flatMap((d) => d.groups);
    const units = groups.map((g) => g.texts.map((t) => t.textContent ?? '').join(''));
    return {
      units,
      rebuild: async (translated) => {
        groups.forEach((g, i) => {
          if (translated[i] === units[i]) return; // nothing translated (no words): runs left exactly as they were
          const [first, ...rest] = g.texts;
          setText(first, translated[i]);
          for (const t of rest) setText(t, '');
        });
        for (const d of docs) zip.file(d.name, serializer.serializeToString(d.xml));
        return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 6 }, platform: 'DOS' });
      },
    };
  }
}

function parseXml(source: string, name: string): Document {
  const problems: string[] = [];
  const xml = new DOMParser({
    // Keep line ends as they are: only <w:t> contents may change.
    normalizeLineEndings: (s) => s,
    onError: (level, message) => {
      if (level !== 'warning') problems.push(message);
    },
  }).parseFromString(source, 'text/xml');
  if (problems.length > 0 || !xml.documentElement) {
    throw new DocumentContentError(`The part ${name} is not well-formed XML: ${problems[0] ?? 'no root element'}`);
  }
  return xml;
}

/** Sets a `<w:t>`'s text; edge spaces need xml:space="preserve" or Word drops them. */
function setText(t: Element, text: string): void {
  while (t.firstChild) t.removeChild(t.firstChild);
  if (text) t.appendChild(t.ownerDocument!.createTextNode(text));
  if (/^\s|\s$/.test(text) && t.getAttributeNS(XML_NS, 'space') !== 'preserve') t.setAttributeNS(XML_NS, 'xml:space', 'preserve');
}
