import type { Readable } from 'node:stream';
import { errorCodes, type FastifyRequest } from 'fastify';
import { badRequest } from './errors.js';

type ParserDone = (error: Error | null, body?: undefined) => void;

/** Resolves once the stream shows whether it carries any byte, without reading past the first chunk. */
function carriesBytes(payload: Readable): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const settle = (carries: boolean) => {
      payload.off('data', onData).off('end', onEnd).off('error', onError);
      payload.pause();
      resolve(carries);
    };
    const onData = (chunk: Buffer | string) => {
      if (chunk.length > 0) settle(true);
    };
    const onEnd = () => settle(false);
    const onError = (error: Error) => {
      payload.off('data', onData).off('end', onEnd).off('error', onError);
      reject(error);
    };
    payload.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

function unsupportedMediaType(): Error {
  return new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE();
}

/**
 * The parser of every request whose Content-Type has no parser of its own, including none at all.
 *
 * A request without a body is body-less whatever its Content-Type (docs/rules/api.md#transport): `curl -d ''`
 * and Python's urllib with `data=b""` send `application/x-www-form-urlencoded` over an empty body. Fastify
 * passes a request straight to the handler only when it has no Content-Type and its framing announces no
 * body; every other one reaches the parsers. So a request that announces a length above 0 is refused with
 * 415 at once, unread; any other is read until its first byte (a chunked one may end at once): none means
 * no body, any means a body not declared JSON, 415. A request for a route that does not exist is passed on
 * unread, as Fastify would, for the not-found handler to answer.
 */
export function parseUntypedBody(request: FastifyRequest, payload: Readable, done: ParserDone): void {
  if (request.is404) return done(null, undefined);
  if (Number(request.headers['content-length'] ?? 0) > 0) return done(unsupportedMediaType());
  carriesBytes(payload).then(
    (carries) => done(carries ? unsupportedMediaType() : null, undefined),
    () => done(badRequest('The body could not be read.')),
  );
}
