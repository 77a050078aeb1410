import { useEffect, useState } from 'react';

/** Copies `text` with the Clipboard API and says so (politely, for screen readers). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = window.setTimeout(() => setState('idle'), 3000);
    return () => window.clearTimeout(timer);
  }, [state]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span className="copy">
      <button type="button" className="button button-secondary" onClick={copy}>
        {label}
      </button>
      <span className="copy-status" role="status" aria-live="polite">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text and copy it by hand' : ''}
      </span>
    </span>
  );
}
