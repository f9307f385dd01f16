import type { Rule } from './index';
import { toNumber } from '../coerce';

export function integer(): Rule {
  return (value) => {
    const n = toNumber(value);
    if (n === undefined) return 'not_a_number';
    return Number.isInteger(n) ? undefined : 'not_an_integer';
  };
}
