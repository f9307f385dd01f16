import { expect, test } from 'vitest';
import { getIn, joinPath } from '../src/path';

test('joins with dots', () => {
  expect(joinPath('', 'a')).toBe('a');
  expect(joinPath('a', 'b')).toBe('a.b');
});

test('reads nested values', () => {
  expect(getIn({ a: { b: 2 } }, 'a.b')).toBe(2);
});
