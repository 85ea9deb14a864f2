import { DomainError } from '@kernel/core';

/** One text field of a urlencoded form ('' when absent or repeated), cut to `max` characters. */
export function formText(form: Record<string, unknown> | undefined, name: string, max = 1000): string {
  const value = form?.[name];
  return typeof value === 'string' ? value.slice(0, max) : '';
}

/** A field that checkboxes may send several times: always a list of strings. */
export function formList(form: Record<string, unknown> | undefined, name: string): string[] {
  const value = form?.[name];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/**
 * A domain refusal the form can show next to a field: `validation_failed` messages read
 * `<field>: <problem>`; `fields` maps the domain's field names to the form's. Anything else is
 * not a form problem (null: let the page's filter answer it).
 */
export function fieldError(err: unknown, fields: Record<string, string>): { field: string; message: string } | null {
  if (!(err instanceof DomainError) || err.code !== 'validation_failed') return null;
  const colon = err.message.indexOf(': ');
  const domainField = colon > 0 ? err.message.slice(0, colon) : '';
  const field = fields[domainField];
  if (!field) return null;
  const problem = err.message.slice(colon + 2);
  // "Name must not be empty." reads as a sentence; a problem that is not a predicate keeps its colon.
  const joiner = /^(must|is|are|has|have|already|cannot|may)\b/.test(problem) ? ' ' : ': ';
  return { field, message: `${sentenceCase(humanField(domainField))}${joiner}${problem}${/[.!?]$/.test(problem) ? '' : '.'}` };
}

/** The fixed sentence a `?done=` code stands for (never text from the address itself). */
export function noticeFor(notices: Record<string, string>, done: unknown): string | undefined {
  return typeof done === 'string' && Object.hasOwn(notices, done) ? notices[done] : undefined;
}

/**
 * A `datetime-local` value (read as UTC: the page says so), or null when it is not one: every
 * field in its range (no 25:00, no 31 February), the year from 0001 on, so that whatever it
 * answers is a real time Postgres can compare with a timestamptz column.
 */
export function parseSince(value: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [+m[1], +m[2], +m[3], +m[4], +m[5], m[6] ? +m[6] : 0];
  if (year < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0–99 as 1900–1999.
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day ? null : d;
}

const humanField = (field: string) => field.replace(/_/g, ' ');
const sentenceCase = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
