// routekit v1 compat tests
// Frozen copy of the 0.x code, kept so old callers keep working; do not edit.

// ---- formerly match.test.js ----

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compilePattern, matchPath } from '../src/match.js';

test('optional parameters may be absent', () => {
  const compiled = compilePattern('/files/:name?');
  assert.deepEqual(matchPath(compiled, '/files'), {});
  assert.deepEqual(matchPath(compiled, '/files/a.txt'), { name: 'a.txt' });
});

test('percent-encoded segments are decoded', () => {
  assert.deepEqual(matchPath(compilePattern('/tags/:tag'), '/tags/c%2B%2B'), { tag: 'c++' });
});

test('wildcard captures the rest', () => {
  assert.deepEqual(matchPath(compilePattern('/static/*'), '/static/css/site.css'), {
    wildcard: 'css/site.css',
  });
});

// ---- formerly params.test.js ----

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

// ---- formerly router.test.js ----

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Router } from '../src/index.js';

test('dispatches to the matching route with params', async () => {
  const router = new Router().get('/users/:id', ({ params }) => params.id, { id: 'int' });
  assert.equal(await router.handle({ method: 'GET', path: '/users/42' }), 42);
});

test('405 lists allowed methods', async () => {
  const router = new Router().post('/items', () => 'ok');
  await assert.rejects(router.handle({ method: 'GET', path: '/items' }), { status: 405 });
});

test('404 for unknown paths', async () => {
  await assert.rejects(new Router().handle({ method: 'GET', path: '/nope' }), { status: 404 });
});
