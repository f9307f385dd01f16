import type { Rule } from './index';

export function pattern(regex: RegExp, code = 'pattern'): Rule {
  return (value) => (typeof value === 'string' && regex.test(value) ? undefined : code);
}
