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
