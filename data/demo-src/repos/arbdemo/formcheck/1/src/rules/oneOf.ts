import type { Rule } from './index';

export function oneOf(choices: readonly unknown[]): Rule {
  const allowed = new Set(choices);
  return (value) => (allowed.has(value) ? undefined : 'one_of');
}
