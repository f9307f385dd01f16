"""Source files of ``arbdemo/formcheck``, a small TypeScript form-validation library.

Larger than the first three demo repositories (33 files, 35 after the second commit), so a
gold file can rank past 20. The second commit adds a date rule and fixes nested field paths.
"""

from __future__ import annotations

from arbwb.demo.model import DemoCommit, DemoRepo, patch

_PACKAGE = """\
{
  "name": "formcheck",
  "version": "1.4.0",
  "type": "module",
  "main": "dist/index.js",
  "types": "dist/index.d.ts",
  "scripts": { "build": "tsc -p .", "test": "vitest run" },
  "devDependencies": { "typescript": "^5.4.0", "vitest": "^1.6.0" }
}
"""

_TSCONFIG = """\
{
  "compilerOptions": {
    "target": "ES2019",
    "module": "ESNext",
    "moduleResolution": "Bundler",
    "strict": true,
    "declaration": true,
    "outDir": "dist"
  },
  "include": ["src"]
}
"""

_README = """\
# formcheck

Declarative form validation: describe each field with rules, get back a map of
messages keyed by field path. Used as demo data by arbwb.

    const schema = object({ email: [required(), email()], age: [range(18, 120)] });
    const issues = validate(schema, formData);
"""

_CHANGELOG = """\
# Changelog

## 1.4.0
- German messages.
- `oneOf` rule.

## 1.3.0
- Async rules run in declaration order.
"""

_GUIDE = """\
# Writing your own rule

A rule is a function from a value to `undefined` (valid) or an issue code.
Register a message for the code in every locale table so users see text,
not codes. Keep rules pure: they may run more than once per submit.
"""

_INDEX_V1 = """\
export { object, field } from './schema';
export type { Schema, FieldSpec } from './schema';
export { validate } from './validate';
export { validateAsync } from './async';
export { ValidationError } from './errors';
export { required, email, length, range, pattern, oneOf } from './rules';
export { formatIssues } from './format';
"""

_INDEX_V2 = patch(
    _INDEX_V1,
    "pattern, oneOf } from './rules';",
    "pattern, oneOf, date } from './rules';",
)

_SCHEMA = """\
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
"""

_VALIDATE = """\
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
"""

_ERRORS = """\
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
"""

_PATH_V1 = """\
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
"""

_PATH_V2 = patch(
    _PATH_V1,
    "    current = current[part];",
    "    if (current == null) return undefined;\n    current = current[part];",
)

_COERCE = """\
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
"""

_FORMAT = """\
import type { Issue } from './validate';

export function formatIssues(issues: Issue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join('\\n');
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
"""

_ASYNC = """\
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
"""

_RULES_INDEX_V1 = """\
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
"""

_RULES_INDEX_V2 = _RULES_INDEX_V1 + "export { date } from './date';\n"

_REQUIRED = """\
import type { Rule } from './index';

export function required(): Rule {
  return (value) => {
    if (value === undefined || value === null) return 'required';
    if (typeof value === 'string' && value.trim() === '') return 'required';
    if (Array.isArray(value) && value.length === 0) return 'required';
    return undefined;
  };
}
"""

_EMAIL = """\
import type { Rule } from './index';

const LOCAL = /^[A-Za-z0-9._%+-]+$/;
const DOMAIN = /^[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+$/;

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
"""

_LENGTH = """\
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
"""

_RANGE = """\
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
"""

_PATTERN = """\
import type { Rule } from './index';

export function pattern(regex: RegExp, code = 'pattern'): Rule {
  return (value) => (typeof value === 'string' && regex.test(value) ? undefined : code);
}
"""

_ONE_OF = """\
import type { Rule } from './index';

export function oneOf(choices: readonly unknown[]): Rule {
  const allowed = new Set(choices);
  return (value) => (allowed.has(value) ? undefined : 'one_of');
}
"""

_DATE = """\
import type { Rule } from './index';

const ISO_DAY = /^(\\d{4})-(\\d{2})-(\\d{2})$/;

export function date(options: { after?: string; before?: string } = {}): Rule {
  return (value) => {
    if (typeof value !== 'string') return 'date';
    const m = ISO_DAY.exec(value);
    if (!m) return 'date';
    const day = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
    if (day.getUTCDate() !== +m[3]) return 'date';
    if (options.after && value <= options.after) return 'date_too_early';
    if (options.before && value >= options.before) return 'date_too_late';
    return undefined;
  };
}
"""

_URL = """\
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
"""

_INTEGER = """\
import type { Rule } from './index';
import { toNumber } from '../coerce';

export function integer(): Rule {
  return (value) => {
    const n = toNumber(value);
    if (n === undefined) return 'not_a_number';
    return Number.isInteger(n) ? undefined : 'not_an_integer';
  };
}
"""

_MATCHES = """\
import type { Rule } from './index';

/** Equal to another field's value, e.g. a repeated password. */
export function matches(read: () => unknown, code = 'mismatch'): Rule {
  return (value) => (value === read() ? undefined : code);
}
"""

_TEST_FORMAT = """\
import { expect, test } from 'vitest';
import { formatIssues, groupByField } from '../src/format';

const issues = [
  { path: 'email', code: 'required', message: 'This field is required.' },
  { path: 'email', code: 'email', message: 'Enter a valid e-mail address.' },
];

test('one line per issue', () => {
  expect(formatIssues(issues).split('\\n')).toHaveLength(2);
});

test('groups issues of one field', () => {
  expect(groupByField(issues).get('email')).toHaveLength(2);
  expect(groupByField(issues).get('name')).toBeUndefined();
});
"""

_TEST_ASYNC = """\
import { expect, test } from 'vitest';
import { validateAsync } from '../src/async';

const taken = async (value: unknown) => (value === 'ada' ? 'taken' : undefined);
const filled = async (value: unknown) => (value ? undefined : 'required');

test('first failing code in declaration order', async () => {
  expect(await validateAsync('', [filled, taken])).toBe('required');
  expect(await validateAsync('ada', [filled, taken])).toBe('taken');
});

test('valid values give undefined', async () => {
  expect(await validateAsync('grace', [filled, taken])).toBeUndefined();
});
"""

_TEST_MESSAGES = """\
import { expect, test } from 'vitest';
import { messageFor } from '../src/messages';

test('unknown locales fall back to English', () => {
  expect(messageFor('fr', 'required')).toBe('This field is required.');
});

test('unknown codes are shown as they are', () => {
  expect(messageFor('en', 'no_such_code')).toBe('no_such_code');
});
"""

_MESSAGES_INDEX = """\
import { en } from './en';
import { de } from './de';

const TABLES: Record<string, Record<string, string>> = { en, de };

export function messageFor(locale: string, code: string): string {
  const table = TABLES[locale] ?? en;
  return table[code] ?? en[code] ?? code;
}
"""

_EN_V1 = """\
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
"""

_EN_V2 = patch(
    _EN_V1,
    "  one_of: 'Choose one of the options.',\n",
    "  one_of: 'Choose one of the options.',\n  date: 'Enter a date as YYYY-MM-DD.',\n"
    "  date_too_early: 'Pick a later date.',\n  date_too_late: 'Pick an earlier date.',\n",
)

_DE = """\
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
"""

_TEST_SCHEMA = """\
import { describe, expect, test } from 'vitest';
import { object, validate, required, length } from '../src';

describe('validate', () => {
  test('reports the first failing rule per field', () => {
    const schema = object({ name: [required(), length(2)] });
    expect(validate(schema, { name: '' })).toEqual([
      { path: 'name', code: 'required', message: 'This field is required.' },
    ]);
  });

  test('nested objects use dotted paths', () => {
    const schema = object({ address: object({ city: [required()] }) });
    expect(validate(schema, { address: {} })[0].path).toBe('address.city');
  });
});
"""

_TEST_RULES = """\
import { expect, test } from 'vitest';
import { email, length, range, oneOf } from '../src/rules';

test('email accepts plain addresses', () => {
  expect(email()('ada@example.org')).toBeUndefined();
  expect(email()('ada@localhost')).toBe('email');
});

test('length counts characters, not bytes', () => {
  expect(length(1, 3)('äö')).toBeUndefined();
});

test('range bounds are inclusive', () => {
  expect(range(1, 5)('5')).toBeUndefined();
  expect(range(1, 5)(6)).toBe('above_range');
});

test('oneOf compares by identity', () => {
  expect(oneOf(['a', 'b'])('c')).toBe('one_of');
});
"""

_TEST_COERCE = """\
import { expect, test } from 'vitest';
import { toNumber, toBoolean } from '../src/coerce';

test('decimal commas are accepted', () => {
  expect(toNumber('3,5')).toBe(3.5);
  expect(toNumber('')).toBeUndefined();
});

test('checkbox values', () => {
  expect(toBoolean('on')).toBe(true);
  expect(toBoolean('off')).toBe(false);
});
"""

_TEST_PATH = """\
import { expect, test } from 'vitest';
import { getIn, joinPath } from '../src/path';

test('joins with dots', () => {
  expect(joinPath('', 'a')).toBe('a');
  expect(joinPath('a', 'b')).toBe('a.b');
});

test('reads nested values', () => {
  expect(getIn({ a: { b: 2 } }, 'a.b')).toBe(2);
});
"""

_TEST_DATE = """\
import { expect, test } from 'vitest';
import { date } from '../src/rules';

test('rejects impossible days', () => {
  expect(date()('2024-02-30')).toBe('date');
  expect(date()('2024-02-29')).toBeUndefined();
});

test('bounds are exclusive', () => {
  expect(date({ after: '2024-01-01' })('2024-01-01')).toBe('date_too_early');
});
"""

FORMCHECK = DemoRepo(
    repo="arbdemo/formcheck",
    language="TypeScript",
    license="MIT",
    commits=(
        DemoCommit(
            "Schema, rules, messages and async validation",
            "2024-03-12T11:00:00+00:00",
            {
                "package.json": _PACKAGE,
                "tsconfig.json": _TSCONFIG,
                "README.md": _README,
                "CHANGELOG.md": _CHANGELOG,
                "docs/guide.md": _GUIDE,
                "src/index.ts": _INDEX_V1,
                "src/schema.ts": _SCHEMA,
                "src/validate.ts": _VALIDATE,
                "src/errors.ts": _ERRORS,
                "src/path.ts": _PATH_V1,
                "src/coerce.ts": _COERCE,
                "src/format.ts": _FORMAT,
                "src/async.ts": _ASYNC,
                "src/rules/index.ts": _RULES_INDEX_V1,
                "src/rules/required.ts": _REQUIRED,
                "src/rules/email.ts": _EMAIL,
                "src/rules/length.ts": _LENGTH,
                "src/rules/range.ts": _RANGE,
                "src/rules/pattern.ts": _PATTERN,
                "src/rules/oneOf.ts": _ONE_OF,
                "src/rules/url.ts": _URL,
                "src/rules/integer.ts": _INTEGER,
                "src/rules/matches.ts": _MATCHES,
                "src/messages/index.ts": _MESSAGES_INDEX,
                "src/messages/en.ts": _EN_V1,
                "src/messages/de.ts": _DE,
                "test/schema.test.ts": _TEST_SCHEMA,
                "test/rules.test.ts": _TEST_RULES,
                "test/coerce.test.ts": _TEST_COERCE,
                "test/path.test.ts": _TEST_PATH,
                "test/format.test.ts": _TEST_FORMAT,
                "test/async.test.ts": _TEST_ASYNC,
                "test/messages.test.ts": _TEST_MESSAGES,
            },
        ),
        DemoCommit(
            "Add a date rule; missing intermediate objects read as undefined",
            "2024-04-15T16:00:00+00:00",
            {
                "src/index.ts": _INDEX_V2,
                "src/rules/index.ts": _RULES_INDEX_V2,
                "src/rules/date.ts": _DATE,
                "src/messages/en.ts": _EN_V2,
                "src/path.ts": _PATH_V2,
                "test/date.test.ts": _TEST_DATE,
            },
        ),
    ),
)
