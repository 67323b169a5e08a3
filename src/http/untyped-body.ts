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
 * A request without a body needs no Content-Type on any route (docs/rules/api.md#transport). Fastify
 * passes one straight to the handler only when its framing announces no body (no Content-Length, or 0); a
 * chunked request that ends at once (a streaming client, Node's `http.request` after `flushHeaders()`)
 * reaches the parsers instead, and with none for it would be refused with 415. So a request without a
 * Content-Type is read until its first byte: none means no body; any means a body not declared JSON, 415 as
 * before. A request with another type is refused at once, unread, as Fastify would. A request for a route
 * that does not exist is passed on unread, as Fastify would too, for the not-found handler to answer.
 */
export function parseUntypedBody(request: FastifyRequest, payload: Readable, done: ParserDone): void {
  if (request.is404) return done(null, undefined);
  if (request.headers['content-type'] !== undefined) return done(unsupportedMediaType());
  carriesBytes(payload).then(
    (carries) => done(carries ? unsupportedMediaType() : null, undefined),
    () => done(badRequest('The body could not be read.')),
  );
}
