/**
 * A virtualized data grid (TanStack Table for the column model, TanStack Virtual for the rows):
 * an ARIA `role="grid"` with one tab stop; arrows, Home/End, PageUp/PageDown move the active cell;
 * Enter or F2 edits it (when `onEdit` is given), Enter saves, Escape cancels. Sorting is the
 * caller's (server-side): a header click calls `onSort`. Only the rows in view are in the DOM.
 */
import { type ColumnDef, tableFeatures, useTable } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { type KeyboardEvent, type ReactNode, useEffect, useMemo, useRef, useState } from 'react';
import { cellText } from './data-table';

export type Row = Record<string, unknown>;
export interface Sort {
  column: string;
  desc: boolean;
}

export interface GridColumn {
  name: string;
  /** PostgreSQL type name, shown under the column name. */
  type?: string;
  /** When set, the cell's value links somewhere (a foreign key): the button calls this. */
  follow?: (value: unknown) => void;
  followLabel?: string;
}

interface Props {
  label: string;
  rows: Row[];
  columns: GridColumn[];
  sort?: Sort;
  onSort?: (sort: Sort | undefined) => void;
  /** Saves a cell's new text; a rejection's message is shown and the cell stays in edit. */
  onEdit?: (row: Row, column: string, text: string | null) => Promise<void>;
  onActiveRow?: (row: Row | undefined) => void;
  /** The grid's height in px (it scrolls inside). */
  height?: number;
}

const ROW_HEIGHT = 30;

/** Where a navigation key moves the active cell (undefined: not a navigation key). */
function targetOf(
  key: string,
  ctrl: boolean,
  at: { r: number; c: number; page: number; rows: number; cols: number },
): { r: number; c: number } | undefined {
  const { r, c, page } = at;
  switch (key) {
    case 'ArrowDown':
      return { r: r + 1, c };
    case 'ArrowUp':
      return { r: r - 1, c };
    case 'ArrowRight':
      return { r, c: c + 1 };
    case 'ArrowLeft':
      return { r, c: c - 1 };
    case 'Home':
      return { r: ctrl ? 0 : r, c: 0 };
    case 'End':
      return { r: ctrl ? at.rows - 1 : r, c: at.cols - 1 };
    case 'PageDown':
      return { r: r + page, c };
    case 'PageUp':
      return { r: r - page, c };
    default:
      return undefined;
  }
}
/** The table's features: the core only (sorting, filtering and paging are the server's). */
const features = tableFeatures({});
const COL_WIDTH = 170;

export function DataGrid({ label, rows, columns, sort, onSort, onEdit, onActiveRow, height = 420 }: Props) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const gridRef = useRef<HTMLTableElement>(null);
  const [active, setActive] = useState({ r: 0, c: 0 });
  const [editing, setEditing] = useState<{ r: number; c: number; text: string; error?: string }>();
  /** When focus should follow the active cell: the time it was asked for, 0 when not. */
  const focusWanted = useRef(0);
  const [, setTick] = useState(0);

  const defs = useMemo<ColumnDef<typeof features, Row>[]>(
    () =>
      columns.map((col) => ({
        id: col.name,
        accessorFn: (r: Row) => r[col.name],
        header: () => col.name,
        cell: (info) => info.getValue(),
      })),
    [columns],
  );
  const table = useTable({ features, data: rows, columns: defs });
  const model = table.getRowModel().rows;
  const virtual = useVirtualizer({
    count: model.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
  });
  const template = `repeat(${columns.length}, ${COL_WIDTH}px)`;
  const width = columns.length * COL_WIDTH;

  // Keep the active cell inside the data when rows change (a new page, a filter).
  useEffect(() => {
    setActive((a) => ({
      r: Math.min(a.r, Math.max(0, rows.length - 1)),
      c: Math.min(a.c, columns.length - 1),
    }));
    setEditing(undefined);
  }, [rows, columns]);
  useEffect(() => onActiveRow?.(rows[active.r]), [rows, active.r, onActiveRow]);
  // Focus follows the active cell; a cell scrolled to is rendered a frame or more later, so the
  // wish stays until a render has that cell (or a second has passed).
  useEffect(() => {
    const want = focusWanted.current;
    if (!want) return;
    const el = gridRef.current?.querySelector<HTMLElement>(`[data-cell="${active.r}:${active.c}"]`);
    if (el) {
      focusWanted.current = 0;
      el.focus();
    } else if (performance.now() - want > 1000) focusWanted.current = 0;
    else {
      const frame = requestAnimationFrame(() => setTick((t) => t + 1));
      return () => cancelAnimationFrame(frame);
    }
  });

  const move = (r: number, c: number) => {
    const nr = Math.max(0, Math.min(rows.length - 1, r));
    const nc = Math.max(0, Math.min(columns.length - 1, c));
    virtual.scrollToIndex(nr);
    focusWanted.current = performance.now();
    setActive({ r: nr, c: nc });
  };
  const page = Math.max(1, Math.floor(height / ROW_HEIGHT) - 2);
  const startEdit = (r: number, c: number) => {
    const col = columns[c];
    const row = rows[r];
    if (!onEdit || !col || !row) return;
    const v = row[col.name];
    setEditing({
      r,
      c,
      text: v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v),
    });
  };
  const save = async (asNull = false) => {
    if (!editing || !onEdit) return;
    const row = rows[editing.r];
    const col = columns[editing.c];
    if (!row || !col) return;
    try {
      await onEdit(row, col.name, asNull ? null : editing.text);
      setEditing(undefined);
      focusWanted.current = performance.now();
    } catch (err) {
      setEditing({ ...editing, error: err instanceof Error ? err.message : String(err) });
    }
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (editing) return;
    const { r, c } = active;
    if (e.key === 'Enter' || e.key === 'F2') {
      e.preventDefault();
      startEdit(r, c);
      return;
    }
    const to = targetOf(e.key, e.ctrlKey, { r, c, page, rows: rows.length, cols: columns.length });
    if (!to) return;
    e.preventDefault();
    move(to.r, to.c);
  };

  const headerOf = (col: GridColumn): ReactNode => {
    const sorted = sort?.column === col.name ? (sort.desc ? 'descending' : 'ascending') : undefined;
    const name = (
      <>
        <span className="grid-col-name">{col.name}</span>
        {col.type && <span className="grid-col-type">{col.type}</span>}
      </>
    );
    return (
      <th scope="col" key={col.name} aria-sort={sorted ?? 'none'} className="grid-head-cell">
        {onSort ? (
          <button
            type="button"
            className="grid-sort"
            title={`Sort by ${col.name}`}
            onClick={() =>
              onSort(
                sorted === 'ascending'
                  ? { column: col.name, desc: true }
                  : sorted === 'descending'
                    ? undefined
                    : { column: col.name, desc: false },
              )
            }
          >
            {name}
            <span aria-hidden="true" className="grid-sort-mark">
              {sorted === 'ascending' ? '▲' : sorted === 'descending' ? '▼' : ''}
            </span>
          </button>
        ) : (
          name
        )}
      </th>
    );
  };

  return (
    <div className="grid-scroll" ref={scrollRef} style={{ maxHeight: height }}>
      <table
        ref={gridRef}
        // biome-ignore lint/a11y/noNoninteractiveElementToInteractiveRole: an ARIA data grid (the WAI-ARIA grid pattern: keyboard-navigable cells)
        role="grid"
        aria-label={label}
        aria-rowcount={rows.length + 1}
        aria-colcount={columns.length}
        className="grid"
        style={{ width }}
        onKeyDown={onKeyDown}
      >
        <thead className="grid-head">
          <tr aria-rowindex={1} className="grid-row" style={{ gridTemplateColumns: template }}>
            {columns.map(headerOf)}
          </tr>
        </thead>
        <tbody style={{ height: virtual.getTotalSize(), position: 'relative', display: 'block' }}>
          {virtual.getVirtualItems().map((v) => {
            const row = model[v.index];
            if (!row) return null;
            return (
              <tr
                key={v.key}
                aria-rowindex={v.index + 2}
                aria-selected={v.index === active.r}
                className="grid-row"
                style={{
                  gridTemplateColumns: template,
                  transform: `translateY(${v.start}px)`,
                  height: ROW_HEIGHT,
                }}
              >
                {row.getAllCells().map((cell, c) => {
                  const col = columns[c] as GridColumn;
                  const value = cell.getValue();
                  const isActive = v.index === active.r && c === active.c;
                  const isEditing = editing && editing.r === v.index && editing.c === c;
                  return (
                    // biome-ignore lint/a11y/useKeyWithClickEvents: the grid's onKeyDown (above) handles keys for every cell
                    <td
                      key={cell.id}
                      aria-colindex={c + 1}
                      data-cell={`${v.index}:${c}`}
                      data-column={col.name}
                      tabIndex={isActive ? 0 : -1}
                      className={`grid-cell${value === null ? ' null' : ''}${isActive ? ' active' : ''}`}
                      onClick={() => setActive({ r: v.index, c })}
                      onDoubleClick={() => startEdit(v.index, c)}
                      title={cellText(value)}
                    >
                      {isEditing ? (
                        <CellEditor
                          label={`Edit ${col.name}`}
                          text={editing.text}
                          error={editing.error}
                          onChange={(text) => setEditing({ ...editing, text, error: undefined })}
                          onSave={(asNull) => void save(asNull)}
                          onCancel={() => {
                            setEditing(undefined);
                            focusWanted.current = performance.now();
                          }}
                        />
                      ) : (
                        <>
                          <span className="grid-value">{cellText(value)}</span>
                          {col.follow && value !== null && value !== undefined && (
                            <button
                              type="button"
                              className="link grid-follow"
                              tabIndex={-1}
                              aria-label={`${col.followLabel ?? 'Open'} ${cellText(value)}`}
                              onClick={() => col.follow?.(value)}
                            >
                              →
                            </button>
                          )}
                        </>
                      )}
                    </td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function CellEditor({
  label,
  text,
  error,
  onChange,
  onSave,
  onCancel,
}: {
  label: string;
  text: string;
  error?: string;
  onChange: (t: string) => void;
  onSave: (asNull: boolean) => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <span className="cell-editor">
      <input
        ref={ref}
        aria-label={label}
        aria-invalid={Boolean(error)}
        value={text}
        onChange={(e) => onChange(e.target.value)}
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Enter') {
            e.preventDefault();
            onSave(false);
          } else if (e.key === 'Escape') {
            e.preventDefault();
            onCancel();
          } else if (e.key === 'Delete' && e.ctrlKey) {
            e.preventDefault();
            onSave(true);
          }
        }}
      />
      {error && (
        <span className="cell-error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
