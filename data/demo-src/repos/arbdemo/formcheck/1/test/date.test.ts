import { expect, test } from 'vitest';
import { date } from '../src/rules';

test('rejects impossible days', () => {
  expect(date()('2024-02-30')).toBe('date');
  expect(date()('2024-02-29')).toBeUndefined();
});

test('bounds are exclusive', () => {
  expect(date({ after: '2024-01-01' })('2024-01-01')).toBe('date_too_early');
});
