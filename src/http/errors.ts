export interface ErrorDetail {
  field: string;
  message: string;
}

const REASONS: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_ENTITY',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

export function reasonFor(status: number): string {
  return REASONS[status] ?? (status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST');
}

/**
 * The one error type of the service. Services throw it; the error handler renders it as
 * `{statusCode, errorCode, message, details?}` and nothing else decides an error's shape.
 */
export class AppError extends Error {
  readonly errorCode: string;

  constructor(
    readonly statusCode: number,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
    this.errorCode = reasonFor(statusCode);
  }
}

export const badRequest = (message: string, details?: ErrorDetail[]) => new AppError(400, message, details);
export const unauthorized = (message: string) => new AppError(401, message);
export const forbidden = (message: string) => new AppError(403, message);
export const notFound = (what: string) => new AppError(404, `${what} was not found.`);
export const conflict = (message: string, details?: ErrorDetail[]) => new AppError(409, message, details);
export const unprocessable = (message: string) => new AppError(422, message);
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new AppError(429, message, undefined, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
