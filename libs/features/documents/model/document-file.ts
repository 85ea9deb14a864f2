import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';

/** How many of a file's first bytes are kept for sniffing (the zip magic, an HTML opening). */
export const SNIFF_HEAD_BYTES = 4096;

/**
 * A document's bytes as received, with what sniffing and storing need to know of them, learned
 * while they streamed in (DocumentFileProbe): the api spools an upload to a file rather than
 * holding it in memory, and hands it over as this.
 */
export interface DocumentFile {
  readonly size: number;
  /** SHA-256 of the bytes, hex. */
  readonly sha256: string;
  /** The first SNIFF_HEAD_BYTES bytes (all of them if fewer). */
  readonly head: Buffer;
  readonly containsNul: boolean;
  /** Whether the bytes are valid UTF-8 as a whole. */
  readonly validUtf8: boolean;
  /** The bytes in order, in chunks of at most `chunkBytes`; a chunk may be reused for the next one: use it before asking for that. */
  chunks(chunkBytes: number): AsyncIterable<Buffer>;
  /** All the bytes at once (only a .docx needs that, to be opened as a zip). */
  readAll(): Promise<Buffer>;
}

export type DocumentFileFacts = Pick<DocumentFile, 'size' | 'sha256' | 'head' | 'containsNul' | 'validUtf8'>;

const NONE = Buffer.alloc(0);
/** How many bytes a UTF-8 sequence has, from its lead byte (an invalid lead is left to isUtf8 to refuse). */
const sequenceLength = (lead: number): number => (lead < 0xc0 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4);
/** Where a sequence cut short by the end of `data` starts (data.length if none is). */
function cutSequenceAt(data: Buffer): number {
  for (let i = data.length - 1; i >= Math.max(0, data.length - 3); i--) {
    if ((data[i] & 0xc0) === 0x80) continue; // a continuation byte: its lead is further back
    return i + sequenceLength(data[i]) > data.length ? i : data.length;
  }
  return data.length;
}

/**
 * Learns a DocumentFile's facts chunk by chunk, holding none of the chunks but the head: UTF-8 is
 * checked without decoding (no string of the file is made), a sequence split between two chunks
 * checked once the second has come.
 */
export class DocumentFileProbe {
  private readonly hash = createHash('sha256');
  /** The start of a UTF-8 sequence cut by the end of the last chunk (at most 3 bytes). */
  private carry: Buffer = NONE;
  private readonly headParts: Buffer[] = [];
  private headBytes = 0;
  private size = 0;
  private containsNul = false;
  private validUtf8 = true;

  update(chunk: Buffer): void {
    this.size += chunk.length;
    this.hash.update(chunk);
    if (this.headBytes < SNIFF_HEAD_BYTES) {
      const part = Buffer.from(chunk.subarray(0, SNIFF_HEAD_BYTES - this.headBytes)); // a copy: the chunk itself is not kept
      this.headParts.push(part);
      this.headBytes += part.length;
    }
    if (!this.containsNul && chunk.includes(0)) this.containsNul = true;
    if (this.validUtf8) this.validUtf8 = this.checkUtf8(chunk);
  }

  finish(): DocumentFileFacts {
    if (this.carry.length > 0) this.validUtf8 = false; // the file ends inside a sequence
    return {
      size: this.size,
      sha256: this.hash.digest('hex'),
      head: Buffer.concat(this.headParts, this.headBytes),
      containsNul: this.containsNul,
      validUtf8: this.validUtf8,
    };
  }

  private checkUtf8(chunk: Buffer): boolean {
    let data = chunk;
    if (this.carry.length > 0) {
      const need = sequenceLength(this.carry[0]) - this.carry.length;
      if (chunk.length < need) {
        this.carry = Buffer.concat([this.carry, chunk]);
        return true;
      }
      if (!isUtf8(Buffer.concat([this.carry, chunk.subarray(0, need)]))) return false;
      data = chunk.subarray(need);
      this.carry = NONE;
    }
    const cut = cutSequenceAt(data);
    if (!isUtf8(data.subarray(0, cut))) return false;
    if (cut < data.length) this.carry = Buffer.from(data.subarray(cut)); // a copy: the chunk itself is not kept
    return true;
  }
}

/** A DocumentFile over bytes already in memory (a JSON text, tests). */
export function documentFileFromBuffer(content: Buffer): DocumentFile {
  const probe = new DocumentFileProbe();
  probe.update(content);
  return {
    ...probe.finish(),
    async *chunks(chunkBytes: number) {
      for (let at = 0; at < content.length; at += chunkBytes) yield content.subarray(at, at + chunkBytes);
    },
    readAll: async () => content,
  };
}
