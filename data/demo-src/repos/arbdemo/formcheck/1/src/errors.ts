import type { Issue } from './validate';

export class ValidationError extends Error {
  readonly issues: Issue[];

  constructor(issues: Issue[]) {
    super(`${issues.length} field(s) are invalid`);
    this.name = 'ValidationError';
    this.issues = issues;
  }

  byPath(): Record<string, string> {
    return Object.fromEntries(this.issues.map((i) => [i.path, i.message]));
  }
}
