import type { Rule } from './index';

const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

export function date(options: { after?: string; before?: string } = {}): Rule {
  return (value) => {
    if (typeof value !== 'string') return 'date';
    const m = ISO_DAY.exec(value);
    if (!m) return 'date';
    const day = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
    if (day.getUTCDate() !== +m[3]) return 'date';
    if (options.after && value <= options.after) return 'date_too_early';
    if (options.before && value >= options.before) return 'date_too_late';
    return undefined;
  };
}
