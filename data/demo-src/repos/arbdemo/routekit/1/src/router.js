import { compilePattern, matchPath } from './match.js';
import { coerceParams } from './params.js';
import { parseQuery } from './query.js';
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
      const query = parseQuery(request.search || '');
      const context = { request, params, query, state: {} };
      return runMiddleware(this.middleware, context, () => route.handler(context));
    }
    if (allowed.length) throw new MethodNotAllowedError(allowed);
    throw new NotFoundError(request.path);
  }
}
