import { expect, test } from 'vitest';
import { formatIssues, groupByField } from '../src/format';

const issues = [
  { path: 'email', code: 'required', message: 'This field is required.' },
  { path: 'email', code: 'email', message: 'Enter a valid e-mail address.' },
];

test('one line per issue', () => {
  expect(formatIssues(issues).split('\n')).toHaveLength(2);
});

test('groups issues of one field', () => {
  expect(groupByField(issues).get('email')).toHaveLength(2);
  expect(groupByField(issues).get('name')).toBeUndefined();
});
