import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuery } from '../src/query.js';

test('repeated keys become arrays', () => {
  assert.deepEqual(parseQuery('?a=1&a=2&b='), { a: ['1', '2'], b: '' });
});
