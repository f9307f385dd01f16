import { describe, expect, test } from 'vitest';
import { object, validate, required, length } from '../src';

describe('validate', () => {
  test('reports the first failing rule per field', () => {
    const schema = object({ name: [required(), length(2)] });
    expect(validate(schema, { name: '' })).toEqual([
      { path: 'name', code: 'required', message: 'This field is required.' },
    ]);
  });

  test('nested objects use dotted paths', () => {
    const schema = object({ address: object({ city: [required()] }) });
    expect(validate(schema, { address: {} })[0].path).toBe('address.city');
  });
});
