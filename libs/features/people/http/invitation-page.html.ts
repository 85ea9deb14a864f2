/** Escapes text for HTML content and double-quoted attribute values. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);

/** Sent with every page: nothing external, no framing, and no Referer carrying the token. */
export const PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1d2430;line-height:1.5}' +
  'label{display:block;margin:1rem 0 .25rem}input[type=text]{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}' +
  'button{margin-top:1rem;padding:.6rem 1.2rem;font-size:1rem}.muted{color:#5b6475}';

/** A whole page; `body` must already be escaped HTML. */
function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
}

export function acceptForm(v: { organisation: string; email: string; name: string; token: string; expiresAt: Date }): string {
  return page(
    `Join ${v.organisation}`,
    `<p>You have been invited to join <strong>${escapeHtml(v.organisation)}</strong> on the interpreting platform as <strong>${escapeHtml(v.email)}</strong>.</p>
<form method="post" action="/invitations/accept">
<input type="hidden" name="token" value="${escapeHtml(v.token)}">
<label for="name">Your name</label>
<input type="text" id="name" name="name" maxlength="200" autocomplete="name" value="${escapeHtml(v.name)}">
<button type="submit">Accept the invitation</button>
</form>
<p class="muted">This invitation expires at ${escapeHtml(v.expiresAt.toISOString())}. If you did not expect it, close this page.</p>`,
  );
}

export function acceptedPage(v: { organisation: string; email: string; signInUrl: string }): string {
  return page(
    `Welcome to ${v.organisation}`,
    `<p>You are now a member of <strong>${escapeHtml(v.organisation)}</strong>.</p>
<p>Sign in as <strong>${escapeHtml(v.email)}</strong> at <a href="${escapeHtml(v.signInUrl)}">${escapeHtml(v.signInUrl)}</a>.</p>`,
  );
}

export function problemPage(title: string, message: string): string {
  return page(title, `<p>${escapeHtml(message)}</p>`);
}
