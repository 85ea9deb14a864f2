import { createHash, randomBytes } from 'node:crypto';
import { DocumentFileProbe, documentFileFromBuffer, SNIFF_HEAD_BYTES } from './document-file';

const decodes = (bytes: Buffer): boolean => {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
};

/** The probe fed `bytes` cut at `cuts`. */
const probed = (bytes: Buffer, cuts: number[]) => {
  const probe = new DocumentFileProbe();
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    probe.update(bytes.subarray(from, at));
    from = at;
  }
  return probe.finish();
};

describe('DocumentFileProbe', () => {
  const samples: Buffer[] = [
    Buffer.from('plain ascii'),
    Buffer.from('café – naïve 日本語 😀 𝄞 end'),
    Buffer.from('😀😀😀'),
    Buffer.from([0xf0, 0x9f, 0x98]), // a 4-byte sequence cut short at the end
    Buffer.from([0x61, 0xc3]), // a 2-byte sequence cut short
    Buffer.from([0xc3, 0x28]), // a lead byte followed by no continuation
    Buffer.from([0xe2, 0x82, 0x28, 0x41]),
    Buffer.from([0xc0, 0xaf]), // overlong
    Buffer.from([0xed, 0xa0, 0x80]), // a surrogate
    Buffer.from([0xf4, 0x90, 0x80, 0x80]), // beyond U+10FFFF
    Buffer.from([0x80, 0x41]), // a continuation without a lead
    Buffer.from([0xff, 0x41, 0x42, 0x43]),
    Buffer.from('caf\xe9', 'latin1'),
    Buffer.alloc(0),
  ];

  it('agrees with a whole-buffer UTF-8 decode however the bytes are cut into chunks', () => {
    const random = Array.from({ length: 300 }, (_, i) => {
      // Mostly valid text with an occasional stray byte, so both answers come up.
      const text = Buffer.from(Array.from({ length: 40 }, () => 'aé日😀'[Math.floor(Math.random() * 4)]).join(''));
      if (i % 3 === 0) text[Math.floor(Math.random() * text.length)] = randomBytes(1)[0];
      return text;
    });
    for (const bytes of [...samples, ...random]) {
      const expected = decodes(bytes);
      for (let trial = 0; trial < 20; trial++) {
        const cuts = Array.from({ length: Math.floor(Math.random() * 6) }, () => Math.floor(Math.random() * (bytes.length + 1))).sort((a, b) => a - b);
        expect({ bytes: bytes.toString('hex'), cuts, valid: probed(bytes, cuts).validUtf8 }).toEqual({ bytes: bytes.toString('hex'), cuts, valid: expected });
      }
      // Every single-byte chunk, too.
      expect(
        probed(
          bytes,
          Array.from({ length: bytes.length }, (_, i) => i),
        ).validUtf8,
      ).toBe(expected);
    }
  });

  it('knows the size, SHA-256, NUL bytes and the head of what it was fed', () => {
    const bytes = Buffer.concat([Buffer.from('x'.repeat(SNIFF_HEAD_BYTES + 10)), Buffer.from([0]), Buffer.from('tail')]);
    const facts = probed(bytes, [1, 100, SNIFF_HEAD_BYTES - 1, SNIFF_HEAD_BYTES + 5]);
    expect(facts.size).toBe(bytes.length);
    expect(facts.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(facts.containsNul).toBe(true);
    expect(facts.head.equals(bytes.subarray(0, SNIFF_HEAD_BYTES))).toBe(true);
    expect(probed(Buffer.from('no nul'), [2]).containsNul).toBe(false);
  });

  it('documentFileFromBuffer gives the bytes back in chunks and whole', async () => {
    const bytes = randomBytes(1000);
    const file = documentFileFromBuffer(bytes);
    const parts: Buffer[] = [];
    for await (const chunk of file.chunks(300)) parts.push(Buffer.from(chunk));
    expect(parts.map((p) => p.length)).toEqual([300, 300, 300, 100]);
    expect(Buffer.concat(parts).equals(bytes)).toBe(true);
    expect((await file.readAll()).equals(bytes)).toBe(true);
    expect(file.size).toBe(1000);
  });
});
