// routekit walkthrough: every module and its tests in one file
// Frozen copy of the 0.x code, kept so old callers keep working; do not edit.

// ---- formerly errors.js ----

export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export class NotFoundError extends HttpError {
  constructor(path) {
    super(404, `no route for ${path}`);
  }
}

export class MethodNotAllowedError extends HttpError {
  constructor(allowed) {
    super(405, `method not allowed; allowed: ${allowed.join(', ')}`);
    this.allowed = allowed;
  }
}

// ---- formerly index.js ----

export { Router } from './router.js';
export { compilePattern, matchPath } from './match.js';
export { HttpError, NotFoundError } from './errors.js';

// ---- formerly match.js ----

const PARAM = /^:([A-Za-z_][A-Za-z0-9_]*)(\?)?$/;

export function compilePattern(pattern) {
  const segments = pattern.split('/').filter(Boolean);
  const keys = [];
  const parts = segments.map((segment) => {
    if (segment === '*') {
      keys.push({ name: 'wildcard', optional: false });
      return '(.*)';
    }
    const param = PARAM.exec(segment);
    if (!param) return escapeSegment(segment);
    keys.push({ name: param[1], optional: Boolean(param[2]) });
    return param[2] ? '(?:/([^/]+))?' : '/([^/]+)';
  });
  const joined = parts.map((p) => (p.startsWith('(?:') || p.startsWith('/') ? p : '/' + p));
  const source = joined.join('');
  return { pattern, keys, regex: new RegExp('^' + (source || '/') + '/?$') };
}

export function escapeSegment(segment) {
  return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function matchPath(compiled, path) {
  const found = compiled.regex.exec(path);
  if (!found) return null;
  const params = {};
  compiled.keys.forEach((key, i) => {
    const value = found[i + 1];
    if (value !== undefined) params[key.name] = decodeURIComponent(value);
  });
  return params;
}

// ---- formerly middleware.js ----

export async function runMiddleware(stack, context, last) {
  let index = -1;
  async function dispatch(i) {
    if (i <= index) throw new Error('next() called more than once');
    index = i;
    const fn = i === stack.length ? last : stack[i];
    return fn(context, () => dispatch(i + 1));
  }
  return dispatch(0);
}

export function timing(clock = () => Date.now()) {
  return async (context, next) => {
    const started = clock();
    const result = await next();
    context.state.elapsedMs = clock() - started;
    return result;
  };
}

// ---- formerly params.js ----

import { HttpError } from './errors.js';

const COERCE = {
  int: (value) => {
    if (!/^-?\d+$/.test(value)) throw new HttpError(400, `expected an integer, got ${value}`);
    return Number.parseInt(value, 10);
  },
  bool: (value) => value === 'true' || value === '1',
  string: (value) => value,
};

export function coerceParams(raw, schema) {
  const params = {};
  for (const [name, value] of Object.entries(raw)) {
    const type = schema[name] || 'string';
    const coerce = COERCE[type];
    if (!coerce) throw new TypeError(`unknown parameter type ${type} for ${name}`);
    params[name] = coerce(value);
  }
  return params;
}

// ---- formerly router.js ----

import { compilePattern, matchPath } from './match.js';
import { coerceParams } from './params.js';
import { runMiddleware } from './middleware.js';
import { NotFoundError, MethodNotAllowedError } from './errors.js';

export class Router {
  constructor() {
    this.routes = [];
    this.middleware = [];
  }

  use(fn) {
    this.middleware.push(fn);
    return this;
  }

  add(method, pattern, handler, schema = {}) {
    const compiled = compilePattern(pattern);
    this.routes.push({ method: method.toUpperCase(), compiled, handler, schema });
    return this;
  }

  get(pattern, handler, schema) {
    return this.add('GET', pattern, handler, schema);
  }

  post(pattern, handler, schema) {
    return this.add('POST', pattern, handler, schema);
  }

  async handle(request) {
    const allowed = [];
    for (const route of this.routes) {
      const raw = matchPath(route.compiled, request.path);
      if (!raw) continue;
      if (route.method !== request.method) {
        allowed.push(route.method);
        continue;
      }
      const params = coerceParams(raw, route.schema);
      const context = { request, params, state: {} };
      return runMiddleware(this.middleware, context, () => route.handler(context));
    }
    if (allowed.length) throw new MethodNotAllowedError(allowed);
    throw new NotFoundError(request.path);
  }
}

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
