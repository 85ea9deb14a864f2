import { Parser } from 'htmlparser2';
import { decodeUtf8, FormatHandler, TranslatableDocument } from './document-format';

/** Elements whose content is never translated (code, scripts, styles, embedded languages). */
const SKIPPED = new Set(['script', 'style', 'template', 'textarea', 'code', 'kbd', 'samp', 'var', 'svg', 'math']);
/** Attributes with words in them, on any element. */
const TEXT_ATTRIBUTES = new Set([
  'title',
  'alt',
  'placeholder',
  'aria-label',
  'aria-description',
  'aria-roledescription',
  'aria-placeholder',
  'aria-valuetext',
]);
const LABEL_ELEMENTS = new Set(['option', 'optgroup', 'track', 'menuitem']);
const BUTTON_INPUTS = new Set(['button', 'submit', 'reset']);
const META_TEXT = new Set(['description', 'keywords', 'og:title', 'og:description', 'og:site_name', 'twitter:title', 'twitter:description']);

/** Whether an attribute carries human-readable text, given its element. */
function translatableAttribute(tag: string, name: string, attribs: Record<string, string>): boolean {
  if (TEXT_ATTRIBUTES.has(name)) return true;
  if (name === 'label') return LABEL_ELEMENTS.has(tag);
  if (name === 'value') return tag === 'input' && BUTTON_INPUTS.has((attribs.type ?? '').toLowerCase());
  if (name === 'content') return tag === 'meta' && META_TEXT.has((attribs.name ?? attribs.property ?? '').toLowerCase());
  return false;
}

/** A range of the source to replace with a translation, and how to escape what goes in. */
interface Slot {
  start: number;
  end: number;
  text: string;
  kind: 'text' | 'attribute';
  /** The attribute's quote in the source; null when unquoted (the translation is then quoted). */
  quote?: string | null;
}

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttribute = (s: string, quote: string) => s.replace(/&/g, '&amp;').replace(quote === "'" ? /'/g : /"/g, quote === "'" ? '&#39;' : '&quot;');

/**
 * HTML: only text nodes and the attributes that carry words (alt, title, placeholder, aria-*
 * labels, option labels, button values, meta descriptions) are translated; the translations are
 * spliced into the source at their exact positions, so every tag, comment, script and style
 * comes back byte for byte. Content of script, style, code-like elements, SVG/MathML, and of
 * anything marked `translate="no"` or class `notranslate` is left as it is.
 */
export class HtmlFormat implements FormatHandler {
  readonly format = 'html' as const;

  async open(content: Buffer): Promise<TranslatableDocument> {
    const { text: source, bom } = decodeUtf8(content);
    const slots = this.findSlots(source);
    return {
      units: slots.map((s) => s.text),
      rebuild: (translated) => {
        let out = '';
        let at = 0;
        slots.forEach((slot, i) => {
          out += source.slice(at, slot.start);
          const t = translated[i];
          // Left as it was (no words in it): the source bytes, entities and all.
          if (t === slot.text) out += source.slice(slot.start, slot.end);
          else if (slot.kind === 'text') out += escapeText(t);
          else out += slot.quote === null ? `"${escapeAttribute(t, '"')}"` : escapeAttribute(t, slot.quote!);
          at = slot.end;
        });
        return Buffer.from(bom + out + source.slice(at), 'utf8');
      },
    };
  }

  private findSlots(source: string): Slot[] {
    const slots: Slot[] = [];
    /** Open elements: whether each one's content is translated. */
    const stack: Array<{ name: string; translate: boolean }> = [];
    const translating = () => (stack.length === 0 ? true : stack[stack.length - 1].translate);
    let pendingAttributes: Array<{ name: string; start: number; end: number; value: string; quote: string | null | undefined }> = [];
    let text: Slot | null = null;
    const flushText = () => {
      if (text && text.text.trim() !== '') slots.push(text);
      text = null;
    };

    const parser = new Parser(
      {
        onattribute(name, value, quote) {
          pendingAttributes.push({ name, start: parser.startIndex, end: parser.endIndex, value, quote });
        },
        onopentag(name, attribs) {
          flushText();
          const own = (attribs.translate ?? '').toLowerCase();
          const refused = own === 'no' || (attribs.class ?? '').split(/\s+/).includes('notranslate');
          // HTML's rule: translate applies to the element's attributes and its text, and is inherited.
          const ownWords = !refused && (own === 'yes' || translating());
          if (ownWords) {
            for (const a of pendingAttributes) {
              if (!a.value.trim() || !translatableAttribute(name, a.name, attribs)) continue;
              const slot = attributeSlot(source, a.start, a.end, a.value);
              if (slot) slots.push(slot);
            }
          }
          pendingAttributes = [];
          stack.push({ name, translate: ownWords && !SKIPPED.has(name) });
        },
        onclosetag(name) {
          flushText();
          pendingAttributes = [];
          // Implied closes arrive in order, so the top of the stack is the element closing.
          const at = stack.map((e) => e.name).lastIndexOf(name);
          if (at !== -1) stack.length = at;
        },
        ontext(data) {
          if (!translating()) return;
          // With entities decoded, one text node can arrive in pieces: join adjacent pieces.
          if (text && text.end === parser.startIndex) {
            text.text += data;
            text.end = parser.endIndex + 1;
          } else {
            flushText();
            text = { start: parser.startIndex, end: parser.endIndex + 1, text: data, kind: 'text' };
          }
        },
        oncomment: () => flushText(),
        onprocessinginstruction: () => flushText(),
        oncdatastart: () => flushText(),
      },
      { decodeEntities: true },
    );
    parser.write(source);
    parser.end();
    flushText();
    return slots.sort((a, b) => a.start - b.start);
  }
}

/** The value range of an attribute whose source runs from `start` (its name) to `end`. */
function attributeSlot(source: string, start: number, end: number, value: string): Slot | null {
  const raw = source.slice(start, end);
  const eq = raw.indexOf('=');
  if (eq === -1) return null;
  let i = eq + 1;
  while (i < raw.length && /\s/.test(raw[i])) i++;
  const q = raw[i];
  if (q === '"' || q === "'") {
    const close = raw.indexOf(q, i + 1);
    if (close === -1) return null;
    return { start: start + i + 1, end: start + close, text: value, kind: 'attribute', quote: q };
  }
  let j = i;
  while (j < raw.length && !/[\s>]/.test(raw[j])) j++;
  return j > i ? { start: start + i, end: start + j, text: value, kind: 'attribute', quote: null } : null;
}
