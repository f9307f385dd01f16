import { isFieldSpec, type Schema } from './schema';
import { getIn, joinPath } from './path';
import { messageFor } from './messages';

export interface Issue {
  path: string;
  code: string;
  message: string;
}

export function validate(schema: Schema, data: unknown, locale = 'en', prefix = ''): Issue[] {
  const issues: Issue[] = [];
  for (const [name, spec] of Object.entries(schema)) {
    const path = joinPath(prefix, name);
    const value = getIn(data, path);
    if (!isFieldSpec(spec)) {
      issues.push(...validate(spec, data, locale, path));
      continue;
    }
    if (spec.optional && (value === undefined || value === '')) continue;
    for (const rule of spec.rules) {
      const code = rule(value);
      if (code) {
        issues.push({ path, code, message: messageFor(locale, code) });
        break;
      }
    }
  }
  return issues;
}
