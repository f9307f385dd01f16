import type { Rule } from './index';

export function url(protocols: readonly string[] = ['https:', 'http:']): Rule {
  return (value) => {
    if (typeof value !== 'string') return 'url';
    try {
      const parsed = new URL(value);
      return protocols.includes(parsed.protocol) ? undefined : 'url_protocol';
    } catch {
      return 'url';
    }
  };
}
