import { parseWebhookUrl, WEBHOOK_URL_PATTERN } from './webhook-url';

describe('WEBHOOK_URL_PATTERN', () => {
  const pattern = new RegExp(WEBHOOK_URL_PATTERN, 'u');
  const accepted = (url: string) => {
    try {
      parseWebhookUrl(url);
      return true;
    } catch {
      return false;
    }
  };

  // (NUL is refused by the front door's body check, before the url is read.)
  it('refuses what parseWebhookUrl refuses', () => {
    for (const url of [
      'http://hooks.example.com/x', 'https://hooks.example.com:8443/x', 'https://user:pw@hooks.example.com/x', 'https://@hooks.example.com/x',
      'https://hooks.example.com/x#frag', 'https://hooks.example.com/a b', 'https:hooks.example.com', 'https:///hooks.example.com',
      'https://hooks.example.com\\x', ' https://hooks.example.com/x', 'ftp://hooks.example.com/', '',
    ]) {
      expect({ url, pattern: pattern.test(url), code: accepted(url) }).toEqual({ url, pattern: false, code: false });
    }
  });

  it('accepts what parseWebhookUrl accepts (the public-address rule aside)', () => {
    for (const url of [
      'https://hooks.example.com/interpreting', 'HTTPS://Hooks.Example.com', 'https://hooks.example.com:443/x?a=1&b=%20', 'https://93.184.216.34/x',
      'https://[2606:4700::1111]/x', 'https://a.b-c.example./x', 'https://hooks.example.com?x=1', 'https://hooks.example.com/é/ü',
    ]) {
      expect({ url, pattern: pattern.test(url), code: accepted(url) }).toEqual({ url, pattern: true, code: true });
    }
  });
});
