import type { Rule } from './index';

const LOCAL = /^[A-Za-z0-9._%+-]+$/;
const DOMAIN = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;

export function email(): Rule {
  return (value) => {
    if (typeof value !== 'string') return 'email';
    const at = value.lastIndexOf('@');
    if (at < 1) return 'email';
    const local = value.slice(0, at);
    const domain = value.slice(at + 1);
    return LOCAL.test(local) && DOMAIN.test(domain) ? undefined : 'email';
  };
}
