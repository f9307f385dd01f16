import type { Issue } from './validate';

export function formatIssues(issues: Issue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join('\n');
}

export function groupByField(issues: Issue[]): Map<string, Issue[]> {
  const groups = new Map<string, Issue[]>();
  for (const issue of issues) {
    const list = groups.get(issue.path) ?? [];
    list.push(issue);
    groups.set(issue.path, list);
  }
  return groups;
}
