/** Values in words: project statuses, byte sizes, dates. */

const STATUS_WORDS: Record<string, string> = {
  ACTIVE_HEALTHY: 'Running',
  ACTIVE_UNHEALTHY: 'Running, unhealthy',
  COMING_UP: 'Starting',
  GOING_DOWN: 'Stopping',
  INACTIVE: 'Paused',
  INIT_FAILED: 'Failed to start',
  PAUSING: 'Pausing',
  RESTORING: 'Restoring',
  RESTARTING: 'Restarting',
  REMOVED: 'Removed',
  UPGRADING: 'Upgrading',
  UNKNOWN: 'Unknown',
};

/** `ACTIVE_HEALTHY` → "Running"; an unlisted status → its words in sentence case. */
export function statusWords(status: string): string {
  const known = STATUS_WORDS[status];
  if (known) return known;
  const words = status.toLowerCase().replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Whether a status is a healthy, settled one (shown green) or not. */
export const statusTone = (status: string): 'ok' | 'busy' | 'bad' =>
  status === 'ACTIVE_HEALTHY'
    ? 'ok'
    : /FAILED|UNHEALTHY|REMOVED|INACTIVE|UNKNOWN/.test(status)
      ? 'bad'
      : 'busy';

/** 39078 → "38.2 KB" (powers of 1024, as file browsers do). */
export function humanSize(bytes: number | undefined | null): string {
  if (bytes === undefined || bytes === null || !Number.isFinite(bytes)) return '—';
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`;
}

/** An ISO timestamp as a short local date and time; "—" when absent. */
export function shortDate(iso: string | undefined | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
