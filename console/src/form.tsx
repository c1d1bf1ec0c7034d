/** Form pieces: a labelled field with the API's error next to it, an inline error line. */
import type { ReactNode } from 'react';

export function ErrorText({ error }: { error?: string }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}

export function Field({ label, error, children }: { label: string; error?: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is `children` (an input or select)
    <label className="field">
      <span>{label}</span>
      {children}
      <ErrorText error={error} />
    </label>
  );
}

/** Runs an action, turning its failure into a message for the form. */
export async function attempt(action: () => Promise<void>, setError: (e?: string) => void): Promise<boolean> {
  setError(undefined);
  try {
    await action();
    return true;
  } catch (err) {
    setError(err instanceof Error ? err.message : String(err));
    return false;
  }
}
