import { expect, test } from 'vitest';
import { validateAsync } from '../src/async';

const taken = async (value: unknown) => (value === 'ada' ? 'taken' : undefined);
const filled = async (value: unknown) => (value ? undefined : 'required');

test('first failing code in declaration order', async () => {
  expect(await validateAsync('', [filled, taken])).toBe('required');
  expect(await validateAsync('ada', [filled, taken])).toBe('taken');
});

test('valid values give undefined', async () => {
  expect(await validateAsync('grace', [filled, taken])).toBeUndefined();
});
