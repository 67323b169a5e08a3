/**
 * What a handler can say about a failure besides throwing an ordinary error (which retries with the
 * kind's backoff until the job runs out of attempts).
 */

/** Try again at this time, not on the backoff schedule (an endpoint's Retry-After, say). */
export class RetryJobAt extends Error {
  constructor(
    readonly runAt: number,
    message: string,
  ) {
    super(message);
    this.name = 'RetryJobAt';
  }
}

/** Retrying cannot help (the input is wrong, the resource is gone): the job becomes dead at once. */
export class PermanentJobFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentJobFailure';
  }
}
