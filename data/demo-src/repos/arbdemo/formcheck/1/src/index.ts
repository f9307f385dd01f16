export { object, field } from './schema';
export type { Schema, FieldSpec } from './schema';
export { validate } from './validate';
export { validateAsync } from './async';
export { ValidationError } from './errors';
export { required, email, length, range, pattern, oneOf, date } from './rules';
export { formatIssues } from './format';
