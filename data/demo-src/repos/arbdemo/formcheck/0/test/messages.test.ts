import { expect, test } from 'vitest';
import { messageFor } from '../src/messages';

test('unknown locales fall back to English', () => {
  expect(messageFor('fr', 'required')).toBe('This field is required.');
});

test('unknown codes are shown as they are', () => {
  expect(messageFor('en', 'no_such_code')).toBe('no_such_code');
});
