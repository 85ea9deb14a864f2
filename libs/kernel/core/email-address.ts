import { validationFailed } from './domain-error';

// Deliberately narrower than RFC 5321: dot-atom local parts only (no quoted strings, no
// comments, no IP literals), which is what real mailboxes use and what mail clients accept.
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const TLD = /^(xn--[a-z0-9-]{1,59}|[a-z]{2,63})$/;

const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
/**
 * parseEmail's rule as one JSON Schema pattern (for the OpenAPI description), with no lookaround
 * so that ajv and Python's re (Schemathesis) read it alike. Not expressed: the 64-character local
 * part, and the trimming of surrounding spaces.
 */
export const EMAIL_PATTERN = `^${ATOM}(\\.${ATOM})*@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+([A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{0,58}[A-Za-z0-9])$`;

/** An address split into its parts, domain lowercased. */
export interface EmailAddress {
  /** `local@domain` with the domain lowercased; the local part keeps its case. */
  address: string;
  domain: string;
}

/**
 * Checks and normalises an address: trimmed, at most 254 characters, a dot-atom local part of at
 * most 64, and a domain of at least two labels with an alphabetic (or punycode) top level.
 * Anything else answers 422 validation_failed naming `field`.
 */
export function parseEmail(input: string, field = 'email'): EmailAddress {
  const value = typeof input === 'string' ? input.trim() : '';
  const at = value.lastIndexOf('@');
  const local = at > 0 ? value.slice(0, at) : '';
  const domain = at > 0 ? value.slice(at + 1).toLowerCase() : '';
  const labels = domain.split('.');
  const ok =
    value.length <= 254 &&
    local.length <= 64 &&
    LOCAL.test(local) &&
    labels.length >= 2 &&
    labels.every((l) => LABEL.test(l)) &&
    TLD.test(labels[labels.length - 1]);
  if (!ok) throw validationFailed(field, 'must be an email address such as name@example.com');
  return { address: `${local}@${domain}`, domain };
}

/** A domain as organisations verify it: lowercased, no leading `@`, at least two labels. */
export function parseDomain(input: string, field = 'domain'): string {
  const domain = (typeof input === 'string' ? input.trim() : '').replace(/^@/, '').replace(/\.$/, '').toLowerCase();
  const labels = domain.split('.');
  if (domain.length > 253 || labels.length < 2 || !labels.every((l) => LABEL.test(l)) || !TLD.test(labels[labels.length - 1])) {
    throw validationFailed(field, 'must be a domain name such as example.com');
  }
  return domain;
}
