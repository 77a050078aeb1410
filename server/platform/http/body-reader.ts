/**
 * Reads a request body as text, never more than MAX_BODY_BYTES of it. A declared Content-Length
 * over the limit is refused before reading (app.ts checks it for every path first); a body without
 * one (chunked) is read as a stream and refused as soon as it passes the limit, so a client cannot
 * make the server buffer more than the limit. Bun's own limit is set far above ours
 * (serve-options.ts): Bun's answer to an oversized body is an empty 413, ours is in our error shape.
 */
import { ApiError } from '../../errors.ts';

export function bodyTooLarge(maxBytes: number): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBytes} bytes`);
}

/** True when the request declares a body larger than `maxBytes`. */
export function declaresTooLargeBody(request: Request, maxBytes: number): boolean {
  const declared = request.headers.get('content-length');
  return declared !== null && Number(declared) > maxBytes;
}

export async function readBodyText(request: Request, maxBytes: number): Promise<string> {
  if (declaresTooLargeBody(request, maxBytes)) throw bodyTooLarge(maxBytes);
  // With a Content-Length within the limit, the runtime delivers exactly that many bytes.
  if (request.headers.has('content-length') || !request.body) return request.text();
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      reader.cancel().catch(() => {});
      throw bodyTooLarge(maxBytes);
    }
    text += decoder.decode(value, { stream: true });
  }
}
