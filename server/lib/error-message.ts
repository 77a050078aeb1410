/**
 * The text of anything thrown or rejected, for logs and error messages. A rejection reason need not be
 * an Error (a thrown string, a driver's plain object with a `message`), so it is read the same way
 * everywhere: the value's `message` when it has one, else the value itself as text.
 */
export function errorMessage(error: unknown): string {
  return String((error as { message?: unknown } | null | undefined)?.message ?? error);
}

/** The first line only: drivers and RPC clients append the request (its body, its arguments) below it. */
export function errorFirstLine(error: unknown): string {
  return errorMessage(error).split('\n')[0]!;
}

/**
 * The first line with every URL cut out, for text a user or an operator's log will see: an RPC
 * endpoint's URL can carry its API key in the path.
 */
export function errorSummary(error: unknown): string {
  return errorFirstLine(error).replace(/\b\w+:\/\/\S+/g, '<url>');
}
