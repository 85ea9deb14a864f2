/** Text as HTML, every character that could open markup or end an attribute escaped. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * An address as HTML that a narrow screen may wrap after each `/` of its path (and before each
 * `?`, `&`, `#` and `=`), never inside its scheme or host. Each piece between those places is an
 * inline block of its own (`span.host` for the host, `span.part` for the others), which the line it
 * sits in does not break into: a hyphen is no place to break. Only a piece longer than a whole
 * line wraps inside; in a table none does (the stylesheet keeps them whole, the table scrolls).
 */
export function breakableUrl(url: string): string {
  const schemeEnd = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0].length ?? 0;
  const pieces: string[] = [];
  let piece = '';
  for (const c of url.slice(schemeEnd)) {
    if ('?&#='.includes(c) && piece) {
      pieces.push(piece);
      piece = '';
    }
    piece += c;
    if (c === '/') {
      pieces.push(piece);
      piece = '';
    }
  }
  if (piece) pieces.push(piece);
  const html = pieces.map((p, i) => `<span class="${i === 0 ? 'host' : 'part'}">${escapeHtml(p)}</span>`);
  return [...(schemeEnd ? [escapeHtml(url.slice(0, schemeEnd))] : []), ...html].join('<wbr>');
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
