import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coerceParams } from '../src/params.js';

test('coerces integers and booleans', () => {
  const params = coerceParams({ n: '7', on: 'true' }, { n: 'int', on: 'bool' });
  assert.deepEqual(params, { n: 7, on: true });
});

test('rejects non-integers with 400', () => {
  assert.throws(() => coerceParams({ n: 'x' }, { n: 'int' }), { status: 400 });
});
