export type Rule = (value: unknown) => string | undefined;

export { required } from './required';
export { email } from './email';
export { length } from './length';
export { range } from './range';
export { pattern } from './pattern';
export { oneOf } from './oneOf';
export { url } from './url';
export { integer } from './integer';
export { matches } from './matches';
