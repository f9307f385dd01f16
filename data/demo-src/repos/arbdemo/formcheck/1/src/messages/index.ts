import { en } from './en';
import { de } from './de';

const TABLES: Record<string, Record<string, string>> = { en, de };

export function messageFor(locale: string, code: string): string {
  const table = TABLES[locale] ?? en;
  return table[code] ?? en[code] ?? code;
}
