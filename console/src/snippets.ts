/** SQL snippets and the editor's last text, kept in this browser (localStorage), per project. */
export interface Snippet {
  name: string;
  sql: string;
}

const key = (ref: string, what: string) => `strata.console.${what}.${ref}`;

export function loadSnippets(ref: string): Snippet[] {
  try {
    const parsed = JSON.parse(localStorage.getItem(key(ref, 'snippets')) ?? '[]') as unknown;
    return Array.isArray(parsed)
      ? parsed.filter((s): s is Snippet => typeof s?.name === 'string' && typeof s?.sql === 'string')
      : [];
  } catch {
    return [];
  }
}

export function saveSnippets(ref: string, list: Snippet[]): void {
  localStorage.setItem(key(ref, 'snippets'), JSON.stringify(list));
}

export const loadDraft = (ref: string): string | null => localStorage.getItem(key(ref, 'draft'));
export const saveDraft = (ref: string, sql: string): void => localStorage.setItem(key(ref, 'draft'), sql);

/**
 * Where an error of database/query points: its `LINE n:` context and caret, as an offset into the
 * SQL that ran (undefined when the message has no position).
 */
export function errorOffset(message: string, sql: string): number | undefined {
  const m = /\nLINE (\d+): [^\n]*\n( *)\^/.exec(message);
  if (!m) return undefined;
  const line = Number(m[1]);
  const column = (m[2]?.length ?? 0) - `LINE ${line}: `.length;
  const lines = sql.split('\n');
  if (line < 1 || line > lines.length || column < 0) return undefined;
  let offset = 0;
  for (let i = 0; i < line - 1; i++) offset += (lines[i]?.length ?? 0) + 1;
  return (
    offset +
    Array.from(lines[line - 1] ?? '')
      .slice(0, column)
      .join('').length
  );
}
