/** How both transports read a JSON input text, naming a deferred reason (procedures/deferred-input.ts) for what cannot be used. */
import type { DeferredReason } from '../procedures/deferred-input.ts';
import { jsonTooDeep } from './input-checks.ts';

/** What a JSON input text reads as: nothing (blank), the reason it cannot be used, or its value. */
export type JsonInput = { blank: true } | { problem: DeferredReason } | { value: unknown };

/**
 * Reads an input text the way both transports do: blank is no input; a Content-Type other than JSON
 * (when one is given to check), nesting deeper than MAX_JSON_DEPTH or malformed JSON is a deferred
 * reason; `notAnObject` names the reason for a value that must be an object and is not.
 */
export function readJsonInput(text: string, options: { contentType?: string | null; notAnObject?: DeferredReason } = {}): JsonInput {
  if (text.trim() === '') return { blank: true };
  if (options.contentType !== undefined && !/^application\/json\b/i.test(options.contentType ?? '')) return { problem: 'unsupported-media-type' };
  if (jsonTooDeep(text)) return { problem: 'too-deep' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'malformed-json' };
  }
  if (options.notAnObject && (typeof value !== 'object' || value === null || Array.isArray(value))) return { problem: options.notAnObject };
  return { value };
}
