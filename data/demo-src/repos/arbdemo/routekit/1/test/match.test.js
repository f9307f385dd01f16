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
