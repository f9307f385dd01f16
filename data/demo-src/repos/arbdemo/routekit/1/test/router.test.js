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

test('exposes parsed query strings', async () => {
  const router = new Router().get('/search', ({ query }) => query.q);
  assert.equal(await router.handle({ method: 'GET', path: '/search', search: '?q=a+b' }), 'a b');
});
