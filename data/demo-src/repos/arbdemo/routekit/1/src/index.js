export { Router } from './router.js';
export { compilePattern, matchPath } from './match.js';
export { HttpError, NotFoundError } from './errors.js';
