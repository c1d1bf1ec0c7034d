/** Rows (JSON objects) as a table; columns are the union of the rows' keys. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return v === null ? 'NULL' : '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export function DataTable({
  rows,
  columns,
  empty = 'No rows.',
}: {
  rows: Record<string, unknown>[];
  columns?: string[];
  /** What an empty table says (what there is not, and what to do about it). */
  empty?: string;
}) {
  const cols = columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  if (rows.length === 0) return <p className="empty">{empty}</p>;
  return (
    <div className="table-wrap">
      <table className="data">
        <thead>
          <tr>
            {cols.map((c) => (
              <th key={c}>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: result rows have no identity
            <tr key={i}>
              {cols.map((c) => (
                <td key={c} className={r[c] === null ? 'null' : undefined}>
                  {cellText(r[c])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
