import type { Rule } from './index';
import { toNumber } from '../coerce';

export function range(lowest: number, highest: number): Rule {
  return (value) => {
    const n = toNumber(value);
    if (n === undefined) return 'not_a_number';
    if (n < lowest) return 'below_range';
    if (n > highest) return 'above_range';
    return undefined;
  };
}
