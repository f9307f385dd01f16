// formcheck compat layer (v1 API)
// Frozen copy of the 0.x code, kept so old callers keep working; do not edit.

// ---- formerly async.ts ----

export type AsyncRule = (value: unknown) => Promise<string | undefined>;

export async function validateAsync(
  value: unknown,
  rules: AsyncRule[],
): Promise<string | undefined> {
  const codes = await Promise.all(rules.map((rule) => rule(value)));
  return codes.find((code) => code !== undefined);
}

export function debounce<T extends unknown[]>(fn: (...args: T) => void, ms: number) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...args: T) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

// ---- formerly coerce.ts ----

export function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const n = Number(value.replace(',', '.'));
  return Number.isNaN(n) ? undefined : n;
}

export function toBoolean(value: unknown): boolean {
  return value === true || value === 'on' || value === 'true' || value === '1';
}

export function toTrimmed(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

// ---- formerly errors.ts ----

import type { Issue } from './validate';

export class ValidationError extends Error {
  readonly issues: Issue[];

  constructor(issues: Issue[]) {
    super(`${issues.length} field(s) are invalid`);
    this.name = 'ValidationError';
    this.issues = issues;
  }

  byPath(): Record<string, string> {
    return Object.fromEntries(this.issues.map((i) => [i.path, i.message]));
  }
}

// ---- formerly format.ts ----

import type { Issue } from './validate';

export function formatIssues(issues: Issue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join('\n');
}

export function groupByField(issues: Issue[]): Map<string, Issue[]> {
  const groups = new Map<string, Issue[]>();
  for (const issue of issues) {
    const list = groups.get(issue.path) ?? [];
    list.push(issue);
    groups.set(issue.path, list);
  }
  return groups;
}

// ---- formerly index.ts ----

export { object, field } from './schema';
export type { Schema, FieldSpec } from './schema';
export { validate } from './validate';
export { validateAsync } from './async';
export { ValidationError } from './errors';
export { required, email, length, range, pattern, oneOf } from './rules';
export { formatIssues } from './format';

// ---- formerly de.ts ----

export const de: Record<string, string> = {
  required: 'Dieses Feld ist erforderlich.',
  email: 'Bitte eine gültige E-Mail-Adresse eingeben.',
  too_short: 'Zu kurz.',
  too_long: 'Zu lang.',
  not_a_number: 'Bitte eine Zahl eingeben.',
  below_range: 'Zu klein.',
  above_range: 'Zu groß.',
  pattern: 'Ungültiges Format.',
};

// ---- formerly en.ts ----

export const en: Record<string, string> = {
  required: 'This field is required.',
  email: 'Enter a valid e-mail address.',
  length: 'Enter text.',
  too_short: 'Too short.',
  too_long: 'Too long.',
  not_a_number: 'Enter a number.',
  below_range: 'Too small.',
  above_range: 'Too large.',
  pattern: 'Invalid format.',
  one_of: 'Choose one of the options.',
};

// ---- formerly index.ts ----

import { en } from './en';
import { de } from './de';

const TABLES: Record<string, Record<string, string>> = { en, de };

export function messageFor(locale: string, code: string): string {
  const table = TABLES[locale] ?? en;
  return table[code] ?? en[code] ?? code;
}

// ---- formerly path.ts ----

export function joinPath(prefix: string, name: string): string {
  return prefix ? `${prefix}.${name}` : name;
}

export function splitPath(path: string): string[] {
  return path.split('.');
}

export function getIn(data: unknown, path: string): unknown {
  let current: any = data;
  for (const part of splitPath(path)) {
    current = current[part];
  }
  return current;
}

// ---- formerly email.ts ----

import type { Rule } from './index';

const LOCAL = /^[A-Za-z0-9._%+-]+$/;
const DOMAIN = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;

export function email(): Rule {
  return (value) => {
    if (typeof value !== 'string') return 'email';
    const at = value.lastIndexOf('@');
    if (at < 1) return 'email';
    const local = value.slice(0, at);
    const domain = value.slice(at + 1);
    return LOCAL.test(local) && DOMAIN.test(domain) ? undefined : 'email';
  };
}

// ---- formerly index.ts ----

export type Rule = (value: unknown) => string | undefined;

export { required } from './required';
export { email } from './email';
export { length } from './length';
export { range } from './range';
export { pattern } from './pattern';
export { oneOf } from './oneOf';
export { url } from './url';
export { integer } from './integer';
export { matches } from './matches';

// ---- formerly integer.ts ----

import type { Rule } from './index';
import { toNumber } from '../coerce';

export function integer(): Rule {
  return (value) => {
    const n = toNumber(value);
    if (n === undefined) return 'not_a_number';
    return Number.isInteger(n) ? undefined : 'not_an_integer';
  };
}

// ---- formerly length.ts ----

import type { Rule } from './index';

export function length(min: number, max = Infinity): Rule {
  return (value) => {
    const n = typeof value === 'string' ? [...value].length : -1;
    if (n < 0) return 'length';
    if (n < min) return 'too_short';
    if (n >= max) return 'too_long';
    return undefined;
  };
}

// ---- formerly matches.ts ----

import type { Rule } from './index';

/** Equal to another field's value, e.g. a repeated password. */
export function matches(read: () => unknown, code = 'mismatch'): Rule {
  return (value) => (value === read() ? undefined : code);
}

// ---- formerly oneOf.ts ----

import type { Rule } from './index';

export function oneOf(choices: readonly unknown[]): Rule {
  const allowed = new Set(choices);
  return (value) => (allowed.has(value) ? undefined : 'one_of');
}

// ---- formerly pattern.ts ----

import type { Rule } from './index';

export function pattern(regex: RegExp, code = 'pattern'): Rule {
  return (value) => (typeof value === 'string' && regex.test(value) ? undefined : code);
}

// ---- formerly range.ts ----

import type { Rule } from './index';
import { toNumber } from '../coerce';

export function range(lowest: number, highest: number): Rule {
  return (value) => {
    const n = toNumber(value);
    if (n === undefined) return 'not_a_number';
    if (n < lowest) return 'below_range';
    if (n > highest) return 'above_range';
    return undefined;
  };
}

// ---- formerly required.ts ----

import type { Rule } from './index';

export function required(): Rule {
  return (value) => {
    if (value === undefined || value === null) return 'required';
    if (typeof value === 'string' && value.trim() === '') return 'required';
    if (Array.isArray(value) && value.length === 0) return 'required';
    return undefined;
  };
}

// ---- formerly url.ts ----

import type { Rule } from './index';

export function url(protocols: readonly string[] = ['https:', 'http:']): Rule {
  return (value) => {
    if (typeof value !== 'string') return 'url';
    try {
      const parsed = new URL(value);
      return protocols.includes(parsed.protocol) ? undefined : 'url_protocol';
    } catch {
      return 'url';
    }
  };
}

// ---- formerly schema.ts ----

import type { Rule } from './rules';

export interface FieldSpec {
  rules: Rule[];
  optional?: boolean;
}

export type Schema = { [name: string]: FieldSpec | Schema };

export function field(rules: Rule[], optional = false): FieldSpec {
  return { rules, optional };
}

export function object(spec: Record<string, Rule[] | FieldSpec | Schema>): Schema {
  const out: Schema = {};
  for (const [name, value] of Object.entries(spec)) {
    out[name] = Array.isArray(value) ? field(value) : value;
  }
  return out;
}

export function isFieldSpec(value: FieldSpec | Schema): value is FieldSpec {
  return Array.isArray((value as FieldSpec).rules);
}

// ---- formerly validate.ts ----

import { isFieldSpec, type Schema } from './schema';
import { getIn, joinPath } from './path';
import { messageFor } from './messages';

export interface Issue {
  path: string;
  code: string;
  message: string;
}

export function validate(schema: Schema, data: unknown, locale = 'en', prefix = ''): Issue[] {
  const issues: Issue[] = [];
  for (const [name, spec] of Object.entries(schema)) {
    const path = joinPath(prefix, name);
    const value = getIn(data, path);
    if (!isFieldSpec(spec)) {
      issues.push(...validate(spec, data, locale, path));
      continue;
    }
    if (spec.optional && (value === undefined || value === '')) continue;
    for (const rule of spec.rules) {
      const code = rule(value);
      if (code) {
        issues.push({ path, code, message: messageFor(locale, code) });
        break;
      }
    }
  }
  return issues;
}
