/** Text as HTML, every character that could open markup or end an attribute escaped. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * An address as HTML that a narrow screen may wrap after each `/` of its path (and before each
 * `?`, `&`, `#` and `=`), never inside its scheme or host: `<wbr>` marks where a line may break,
 * and the host is a `span.host` that the stylesheet keeps whole (a hyphen in it is no place to
 * break), unless the host alone is longer than a line.
 */
export function breakableUrl(url: string): string {
  const schemeEnd = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0].length ?? 0;
  const hostLength = url.slice(schemeEnd).search(/[/?#]/);
  const hostEnd = hostLength < 0 ? url.length : schemeEnd + hostLength;
  const tail = url
    .slice(hostEnd)
    .replace(/[/?&#=]|[^/?&#=]+/g, (part) => (part === '/' ? '/<wbr>' : /^[?&#=]$/.test(part) ? `<wbr>${escapeHtml(part)}` : escapeHtml(part)));
  const host = url.slice(schemeEnd, hostEnd);
  return `${escapeHtml(url.slice(0, schemeEnd))}${schemeEnd ? '<wbr>' : ''}${host ? `<span class="host">${escapeHtml(host)}</span>` : ''}${tail}`;
}

/** Text as escaped HTML in which every http(s) address may wrap as `breakableUrl` says. */
export function breakableText(text: string): string {
  let html = '';
  let from = 0;
  for (const m of text.matchAll(/https?:\/\/[^\s"'<>]+/g)) {
    html += escapeHtml(text.slice(from, m.index)) + breakableUrl(m[0]);
    from = m.index + m[0].length;
  }
  return html + escapeHtml(text.slice(from));
}
