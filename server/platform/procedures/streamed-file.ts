/**
 * A procedure's answer that is a file streamed as it is produced (the company export), for the
 * routers. On /api the REST bridge serves its body as the response's, chunk by chunk as the
 * producer writes them, with its content type and `Content-Disposition: attachment`
 * (http/rest-bridge.ts, http/response-headers.ts); everything before it is the procedure's as for
 * any answer: the gate (401, 400, 429, the charge or 402), then the handler, which hands back the
 * file before its first byte is read. Its meta's `files` documents the media types
 * (http/openapi-streams.ts).
 *
 * A file has no tRPC form (tRPC answers JSON, whole): on /trpc and through tRPC's caller the call is
 * refused with 400 naming the REST route, and a refused call costs nothing (its charge is returned).
 */
import { z } from 'zod';
import { ApiError } from '../../errors.ts';

export class StreamedFile {
  constructor(
    readonly body: ReadableStream<Uint8Array>,
    /** The Content-Type, e.g. `text/csv; charset=utf-8`. */
    readonly contentType: string,
    /** The name a client saves it under (Content-Disposition), a plain token: letters, digits, `.`, `_`, `-`. */
    readonly filename: string,
  ) {
    if (!/^[A-Za-z0-9._-]{1,200}$/.test(filename)) throw new Error(`StreamedFile: ${JSON.stringify(filename)} is not a plain file name`);
  }
}

/** The output schema of a procedure that answers a StreamedFile (its media types are documented from the meta's `files`). */
export const streamedFileOutput = () =>
  z.custom<StreamedFile>((value) => value instanceof StreamedFile, { error: 'not a streamed file' }).meta({ description: 'A file, streamed (see the media types)' });

/**
 * The file a REST request's procedure answered, keyed by the request's context (the object the REST
 * bridge and the response builder share): the bridge leaves it here, and the response serves it as
 * its body in place of JSON text (http/response-headers.ts).
 */
const filesByRequest = new WeakMap<object, StreamedFile>();

export function answerWithFile(ctx: object, file: StreamedFile): void {
  filesByRequest.set(ctx, file);
}

export function answeredFile(ctx: object | undefined): StreamedFile | undefined {
  return ctx === undefined ? undefined : filesByRequest.get(ctx);
}

/** Refuses a call that cannot receive a file: anything but REST (400, before the file is made). */
export function refuseUnlessRest(ctx: { transport: string }, restRoute: string): void {
  if (ctx.transport !== 'rest') throw new ApiError('BAD_REQUEST', `This procedure answers a file, which is served over REST only: ${restRoute}`);
}
