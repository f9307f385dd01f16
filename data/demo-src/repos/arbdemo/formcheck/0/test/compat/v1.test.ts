// formcheck v1 compat tests
// Frozen copy of the 0.x code, kept so old callers keep working; do not edit.

// ---- formerly async.test.ts ----

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

// ---- formerly coerce.test.ts ----

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

// ---- formerly format.test.ts ----

import { expect, test } from 'vitest';
import { formatIssues, groupByField } from '../src/format';

const issues = [
  { path: 'email', code: 'required', message: 'This field is required.' },
  { path: 'email', code: 'email', message: 'Enter a valid e-mail address.' },
];

test('one line per issue', () => {
  expect(formatIssues(issues).split('\n')).toHaveLength(2);
});

test('groups issues of one field', () => {
  expect(groupByField(issues).get('email')).toHaveLength(2);
  expect(groupByField(issues).get('name')).toBeUndefined();
});

// ---- formerly messages.test.ts ----

import { expect, test } from 'vitest';
import { messageFor } from '../src/messages';

test('unknown locales fall back to English', () => {
  expect(messageFor('fr', 'required')).toBe('This field is required.');
});

test('unknown codes are shown as they are', () => {
  expect(messageFor('en', 'no_such_code')).toBe('no_such_code');
});

// ---- formerly path.test.ts ----

import { expect, test } from 'vitest';
import { getIn, joinPath } from '../src/path';

test('joins with dots', () => {
  expect(joinPath('', 'a')).toBe('a');
  expect(joinPath('a', 'b')).toBe('a.b');
});

test('reads nested values', () => {
  expect(getIn({ a: { b: 2 } }, 'a.b')).toBe(2);
});

// ---- formerly rules.test.ts ----

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

// ---- formerly schema.test.ts ----

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
