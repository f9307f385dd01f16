import type { Rule } from './index';

export function required(): Rule {
  return (value) => {
    if (value === undefined || value === null) return 'required';
    if (typeof value === 'string' && value.trim() === '') return 'required';
    if (Array.isArray(value) && value.length === 0) return 'required';
    return undefined;
  };
}
