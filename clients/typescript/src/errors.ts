// The errors the client throws: one class per kind of failure an agent branches on.
import type { components } from "./openapi.js";

/** A stable error code of the API; http_<status> for an answer not in the API's shape. */
export type ErrorCode = components["schemas"]["ErrorBody"]["code"] | `http_${number}`;

/** Anything the client throws. */
export class CredoError extends Error {
  override name = "CredoError";
}

/** No answer from the server: it could not be reached, or the connection broke. */
export class TransportError extends CredoError {
  override name = "TransportError";
}

/** No complete answer by the call's deadline, the client's timeout (or an episode not done within a wait's). */
export class TimeoutError extends TransportError {
  override name = "TimeoutError";
}

/**
 * An answer that is not the API's: a success whose body is not JSON, or not the shape its
 * operation promises (a proxy's or another server's page, say). Not retried: asking again
 * would get the same.
 */
export class InvalidResponse extends CredoError {
  override name = "InvalidResponse";

  constructor(
    /** The HTTP status it came with. */
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A redirect (3xx), which the client never follows, to another host or its own:
 * following one would take the key, and the request, wherever the answer points (and a
 * POST would come back a GET). location is where it pointed, when the runtime shows it
 * (a browser's fetch hides it). Give the client the API's own URL. Not retried.
 */
export class Redirected extends InvalidResponse {
  override name = "Redirected";

  constructor(
    status: number,
    /** Where the redirect pointed; undefined when not said or not shown. */
    readonly location: string | undefined,
    message: string,
  ) {
    super(status, message);
  }
}

/** The error for a redirect answer to request what. */
export function redirected(what: string, res: Response): Redirected {
  const location = res.headers.get("Location") ?? undefined;
  const where = location === undefined ? "with no Location shown" : `to ${location}`;
  return new Redirected(
    res.status,
    location,
    `${what}: the server answered ${res.status || "a redirect"}, a redirect ${where}; the client follows no redirect ` +
      "(it would take the key and the request there): give it the API's own URL",
  );
}

/** An error answer of the API: {"error": {"code", "message", "details"}}. */
export class APIError extends CredoError {
  override name = "APIError";
  /** Details of each problem, when there are several. */
  readonly details: string[];

  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** Stable: branch on it, not on the message. */
    readonly code: ErrorCode,
    /** The API's message, for people. */
    message: string,
    details?: string[],
  ) {
    super(message);
    this.details = details ?? [];
  }
}

/** 400: a parameter or the body is malformed or invalid. */
export class InvalidRequest extends APIError {
  override name = "InvalidRequest";
}

/** 401: no key where one is needed, or not a valid, unrevoked key. */
export class Unauthorized extends APIError {
  override name = "Unauthorized";
}

/** 403: the scope is outside the key's prefixes, or the key lacks the right. */
export class Forbidden extends APIError {
  override name = "Forbidden";
}

/** 404: no such belief, episode, review item or scope visible to the key. */
export class NotFound extends APIError {
  override name = "NotFound";
}

/** 409: the revision engine refused an operator's revision, a review item is already resolved or no longer applies, or a revision cannot be reverted (only the latest of a chain can). */
export class Refused extends APIError {
  override name = "Refused";
}

/** 429: over the key's rate limit; retryAfter is the seconds to wait, if said. */
export class RateLimited extends APIError {
  override name = "RateLimited";

  constructor(status: number, code: ErrorCode, message: string, details: string[] | undefined, readonly retryAfter?: number) {
    super(status, code, message, details);
  }
}

/** 5xx: a server fault (internal), a model that did not answer (embedding_failed, model_failed) or an API that is off (api_disabled). */
export class ServerError extends APIError {
  override name = "ServerError";
}

const byStatus: Record<number, typeof APIError> = {
  400: InvalidRequest,
  401: Unauthorized,
  403: Forbidden,
  404: NotFound,
  409: Refused,
};

/**
 * The seconds a Retry-After header asks to wait: a number of seconds, or an HTTP date
 * (measured from now, in milliseconds since the epoch); undefined when absent or neither.
 */
export function retryAfterSeconds(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^[0-9]+(\.[0-9]+)?$/.test(v)) {
    const seconds = Number(v);
    return Number.isFinite(seconds) ? seconds : undefined;
  }
  // An HTTP date begins with the day's name (IMF-fixdate and both obsolete forms);
  // Date.parse alone would take "-1" for a year.
  const at = /^[A-Za-z]{3}/.test(v) ? Date.parse(v) : NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/** The error for an error answer. A body not in the API's shape (a proxy's page, say) keeps its status, with code http_<status>. */
export function apiError(status: number, headers: Headers, body: string): APIError {
  let code: ErrorCode = `http_${status}`;
  let message = body.trim().slice(0, 200) || `HTTP ${status}`;
  let details: string[] | undefined;
  try {
    const e = (JSON.parse(body) as { error?: Partial<Record<keyof components["schemas"]["ErrorBody"], unknown>> }).error;
    if (e && typeof e.code === "string" && typeof e.message === "string") {
      [code, message] = [e.code as ErrorCode, e.message];
      details = Array.isArray(e.details) ? e.details.map(String) : undefined;
    }
  } catch {
    // not JSON: keep the status and the body's start
  }
  if (status === 429) return new RateLimited(status, code, message, details, retryAfterSeconds(headers.get("Retry-After")));
  if (status >= 500) return new ServerError(status, code, message, details);
  const Kind = byStatus[status] ?? APIError;
  return new Kind(status, code, message, details);
}
