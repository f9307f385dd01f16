import type { Rule } from './index';

/** Equal to another field's value, e.g. a repeated password. */
export function matches(read: () => unknown, code = 'mismatch'): Rule {
  return (value) => (value === read() ? undefined : code);
}
