import type { Rule } from './rules';

export interface FieldSpec {
  rules: Rule[];
  optional?: boolean;
}

export type Schema = { [name: string]: FieldSpec | Schema };

export function field(rules: Rule[], optional = false): FieldSpec {
  return { rules, optional };
}

export function object(spec: Record<string, Rule[] | FieldSpec | Schema>): Schema {
  const out: Schema = {};
  for (const [name, value] of Object.entries(spec)) {
    out[name] = Array.isArray(value) ? field(value) : value;
  }
  return out;
}

export function isFieldSpec(value: FieldSpec | Schema): value is FieldSpec {
  return Array.isArray((value as FieldSpec).rules);
}
