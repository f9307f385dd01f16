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
