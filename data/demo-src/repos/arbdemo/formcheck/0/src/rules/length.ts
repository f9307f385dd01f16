import type { Rule } from './index';

export function length(min: number, max = Infinity): Rule {
  return (value) => {
    const n = typeof value === 'string' ? [...value].length : -1;
    if (n < 0) return 'length';
    if (n < min) return 'too_short';
    if (n >= max) return 'too_long';
    return undefined;
  };
}
