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
