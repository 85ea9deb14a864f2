import { DOMParser, Element, Node, XMLSerializer } from '@xmldom/xmldom';
import JSZip from 'jszip';

const W =
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n';
const CT = 'application/vnd.openxmlformats-officedocument';
/** A 1×1 PNG: a binary part that must come back byte for byte. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/** The text parts of the fixture and what a reader sees in them. */
export const DOCX_TEXT_PARTS = ['word/document.xml', 'word/header1.xml', 'word/footer1.xml', 'word/footnotes.xml'];

/**
 * A small but real .docx: styles, a header, a footer, a footnote, an image, a hyperlink, a table,
 * a field, bookmarks, proofing marks, runs split by revision ids, a tab and a text box.
 */
export async function buildDocx(): Promise<Buffer> {
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    `${DECL}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>' +
      `<Override PartName="/word/document.xml" ContentType="${CT}.wordprocessingml.document.main+xml"/>` +
      `<Override PartName="/word/styles.xml" ContentType="${CT}.wordprocessingml.styles+xml"/>` +
      `<Override PartName="/word/header1.xml" ContentType="${CT}.wordprocessingml.header+xml"/>` +
      `<Override PartName="/word/footer1.xml" ContentType="${CT}.wordprocessingml.footer+xml"/>` +
      `<Override PartName="/word/footnotes.xml" ContentType="${CT}.wordprocessingml.footnotes+xml"/>` +
      '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>' +
      `<Override PartName="/docProps/app.xml" ContentType="${CT}.extended-properties+xml"/>` +
      '</Types>',
  );
  zip.file(
    '_rels/.rels',
    `${DECL}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>' +
      '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>' +
      '<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/>' +
      '</Relationships>',
  );
  zip.file(
    'word/_rels/document.xml.rels',
    `${DECL}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>' +
      '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/header" Target="header1.xml"/>' +
      '<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footer" Target="footer1.xml"/>' +
      '<Relationship Id="rId4" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/>' +
      '<Relationship Id="rId5" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/image1.png"/>' +
      '<Relationship Id="rId6" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://example.com/" TargetMode="External"/>' +
      '</Relationships>',
  );
  zip.file(
    'word/styles.xml',
    `${DECL}<w:styles ${W}><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>` +
      '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:rPr><w:b/><w:sz w:val="32"/></w:rPr></w:style></w:styles>',
  );
  zip.file(
    'word/document.xml',
    `${DECL}<w:document ${W} xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture" xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><w:body>` +
      '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Annual report</w:t></w:r></w:p>' +
      // One sentence Word split into three runs (revision ids, a proofing mark, a bookmark) with the same formatting.
      '<w:p><w:r w:rsidR="00A1"><w:rPr><w:i/></w:rPr><w:t xml:space="preserve">The cat </w:t></w:r><w:proofErr w:type="spellStart"/><w:bookmarkStart w:id="0" w:name="b"/>' +
      '<w:r w:rsidR="00B2"><w:rPr><w:i/></w:rPr><w:t>is</w:t></w:r><w:bookmarkEnd w:id="0"/><w:proofErr w:type="spellEnd"/><w:r w:rsidR="00C3"><w:rPr><w:i/></w:rPr><w:t xml:space="preserve"> black.</w:t></w:r>' +
      '<w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve"> Bold words</w:t></w:r><w:r><w:tab/><w:t>after a tab</w:t></w:r>' +
      '<w:r><w:footnoteReference w:id="1"/></w:r></w:p>' +
      '<w:p><w:r><w:t xml:space="preserve">Visit </w:t></w:r><w:hyperlink r:id="rId6"><w:r><w:rPr><w:rStyle w:val="Hyperlink"/></w:rPr><w:t>our website</w:t></w:r></w:hyperlink><w:r><w:t>.</w:t></w:r></w:p>' +
      '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> DATE \\@ "yyyy" </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>2026</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>' +
      '<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid><w:gridCol w:w="4000"/><w:gridCol w:w="4000"/></w:tblGrid>' +
      '<w:tr><w:tc><w:p><w:r><w:t>First cell</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Second cell</w:t></w:r></w:p></w:tc></w:tr></w:tbl>' +
      '<w:p><w:r><w:drawing><wp:inline><wp:extent cx="9525" cy="9525"/><wp:docPr id="1" name="Picture 1"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">' +
      '<pic:pic><pic:blipFill><a:blip r:embed="rId5"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>' +
      '<w:r><w:t xml:space="preserve"> A picture caption</w:t></w:r></w:p>' +
      '<w:p><w:r><w:drawing><wp:anchor><a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp><wps:txbx><w:txbxContent>' +
      '<w:p><w:r><w:t>Text in a box</w:t></w:r></w:p></w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></w:r></w:p>' +
      '<w:p><w:ins w:id="5" w:author="A"><w:r><w:t>Inserted text</w:t></w:r></w:ins><w:del w:id="6" w:author="A"><w:r><w:delText>Deleted text</w:delText></w:r></w:del></w:p>' +
      '<w:sectPr><w:headerReference w:type="default" r:id="rId2"/><w:footerReference w:type="default" r:id="rId3"/><w:pgSz w:w="11906" w:h="16838"/></w:sectPr>' +
      '</w:body></w:document>',
  );
  zip.file('word/header1.xml', `${DECL}<w:hdr ${W}><w:p><w:r><w:t>Confidential header</w:t></w:r></w:p></w:hdr>`);
  zip.file('word/footer1.xml', `${DECL}<w:ftr ${W}><w:p><w:r><w:t xml:space="preserve">Page footer </w:t></w:r></w:p></w:ftr>`);
  zip.file(
    'word/footnotes.xml',
    `${DECL}<w:footnotes ${W}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>` +
      '<w:footnote w:id="1"><w:p><w:r><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> A footnote.</w:t></w:r></w:p></w:footnote></w:footnotes>',
  );
  zip.file('word/media/image1.png', PNG);
  zip.file(
    'docProps/core.xml',
    `${DECL}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Report</dc:title></cp:coreProperties>`,
  );
  zip.file(
    'docProps/app.xml',
    `${DECL}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Application>Fixture</Application></Properties>`,
  );
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

const W_NS = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';

/** A part's XML with every `<w:t>` emptied and xml:space dropped from them: what must not change. */
export function withoutText(xml: string): string {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  for (const t of Array.from(doc.getElementsByTagNameNS(W_NS, 't')) as Element[]) {
    while (t.firstChild) t.removeChild(t.firstChild as Node);
    t.removeAttribute('xml:space');
  }
  return new XMLSerializer().serializeToString(doc);
}

/** The text of every `<w:t>` in a part, in order. */
export function runTexts(xml: string): string[] {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  return (Array.from(doc.getElementsByTagNameNS(W_NS, 't')) as Element[]).map((t) => t.textContent ?? '');
}
