/** Reading a server-sent-events body in a test, with the service's own parser (server/streams/sse-client.ts). */
import { SseParser, type SseItem } from '../../server/streams/sse-client.ts';

/**
 * Reads the body in the background, handing every item (event, comment, id, retry) to `onItem`;
 * resolves when the body ends or the reader is cancelled.
 */
export async function readSse(reader: ReadableStreamDefaultReader<Uint8Array>, onItem: (item: SseItem) => void): Promise<void> {
  const parser = new SseParser(onItem);
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.push(decoder.decode(value, { stream: true }));
    }
  } catch {
    // cancelled
  }
}
