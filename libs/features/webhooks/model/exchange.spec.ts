import { answerClass, bodyText, connectionErrorClass } from './exchange';

const err = (code: string, cause?: unknown) => Object.assign(new Error(code), { code, cause });

describe('the exchange of an attempt', () => {
  it('classes connection errors by their code or their cause’s', () => {
    expect(connectionErrorClass(err('ECONNREFUSED'))).toBe('refused');
    expect(connectionErrorClass(Object.assign(new Error('fetch failed'), { cause: err('ECONNREFUSED') }))).toBe('refused');
    expect(connectionErrorClass(err('DEPTH_ZERO_SELF_SIGNED_CERT'))).toBe('tls');
    expect(connectionErrorClass(err('ERR_TLS_CERT_ALTNAME_INVALID'))).toBe('tls');
    expect(connectionErrorClass(err('ERR_SSL_WRONG_VERSION_NUMBER'))).toBe('tls');
    expect(connectionErrorClass(err('UND_ERR_CONNECT_TIMEOUT'))).toBe('timeout');
    expect(connectionErrorClass(err('UND_ERR_HEADERS_TIMEOUT'))).toBe('timeout');
    expect(connectionErrorClass(err('ECONNRESET'))).toBe('connection_lost');
    expect(connectionErrorClass(err('UND_ERR_SOCKET', err('ECONNRESET')))).toBe('connection_lost');
    expect(connectionErrorClass(new Error('something else'))).toBe('other');
  });

  it('classes answers: 2xx none, 3xx a redirect, anything else a status', () => {
    expect([200, 204, 299, 301, 307, 399, 400, 404, 500, 503].map(answerClass)).toEqual([
      null,
      null,
      null,
      'redirect',
      'redirect',
      'redirect',
      'status',
      'status',
      'status',
      'status',
    ]);
  });

  it('shows a body as text when it is UTF-8 text of a text type (or none), otherwise not', () => {
    expect(bodyText(Buffer.from('{"ok":true}'), 'application/json', false)).toBe('{"ok":true}');
    expect(bodyText(Buffer.from('<ok/>'), 'application/problem+xml', false)).toBe('<ok/>');
    expect(bodyText(Buffer.from('grüße'), 'text/plain; charset=utf-8', false)).toBe('grüße');
    expect(bodyText(Buffer.from('plain'), undefined, false)).toBe('plain');
    expect(bodyText(Buffer.from('GIF89a'), 'image/gif', false)).toBeNull();
    expect(bodyText(Buffer.from([0x00, 0x01, 0x02]), undefined, false)).toBeNull();
    expect(bodyText(Buffer.from([0xff, 0xfe, 0x41]), 'text/plain', false)).toBeNull();
  });

  it('a cut text body may end inside a character: that character is dropped, the rest is text', () => {
    const whole = Buffer.from('aé€😀');
    // Cut inside the 4-byte emoji, then inside the 3-byte euro sign.
    expect(bodyText(whole.subarray(0, whole.length - 1), 'text/plain', true)).toBe('aé€');
    expect(bodyText(whole.subarray(0, 4), 'text/plain', true)).toBe('aé');
    // Not cut: the same bytes are not valid UTF-8.
    expect(bodyText(whole.subarray(0, whole.length - 1), 'text/plain', false)).toBeNull();
  });
});
