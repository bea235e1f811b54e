// A client of credo's HTTP API (docs/api.md): one method per operation, on fetch, with
// the types generated from the API's OpenAPI document (src/openapi.ts).
import { mismatch } from "./check.js";
import {
  APIError,
  InvalidResponse,
  RateLimited,
  Redirected,
  ServerError,
  TimeoutError,
  TransportError,
  apiError,
  redirected,
} from "./errors.js";
import { answers, type components, type operations } from "./openapi.js";

export * from "./errors.js";
export type { components, operations, paths } from "./openapi.js";

type Schemas = components["schemas"];
export type Belief = Schemas["Belief"];
export type Beliefs = Schemas["Beliefs"];
export type Event = Schemas["Event"];
export type Reverted = Schemas["Reverted"];
export type Audit = Schemas["Audit"];
export type AuditRevisions = Schemas["AuditRevisions"];
export type AuditOrigin = Schemas["AuditOrigin"];
export type AuditRefusals = Schemas["AuditRefusals"];
export type Conflict = Schemas["Conflict"];
export type Proposal = Schemas["Proposal"];
export type Decided = Schemas["Decided"];
export type Revision = Schemas["Revision"];
export type Enqueued = Schemas["Enqueued"];
export type Episode = Schemas["Episode"];
export type Forgotten = Schemas["Forgotten"];
export type Purged = Schemas["Purged"];
export type ContextAnswer = Schemas["ContextAnswer"];
export type AskAnswer = Schemas["AskAnswer"];
export type Transcript = Schemas["Transcript"];
export type Message = Schemas["Message"];
export type AssertRequest = Schemas["AssertRequest"];
export type CorrectRequest = Schemas["CorrectRequest"];
export type ForgetRequest = Schemas["ForgetRequest"];
export type ResolveRequest = Schemas["ResolveRequest"];
export type RevertRequest = Schemas["RevertRequest"];
export type ImportReport = Schemas["ImportReport"];
export type ScopeImported = Schemas["ScopeImported"];
export type Entity = Schemas["Entity"];
export type Entities = Schemas["Entities"];
export type EntityView = Schemas["EntityView"];
export type Slot = Schemas["Slot"];
export type MergeRequest = Schemas["MergeRequest"];
export type Merged = Schemas["Merged"];
export type MergeProposal = Schemas["MergeProposal"];

/**
 * A line of an export (docs/api.md, "Export and import"): the header first (format,
 * version, scopes...), then records, each with its type and scope, the end record last.
 */
export type ExportRecord = { type?: string; [field: string]: unknown };
export type Policy = Schemas["Policy"];
export type Policies = Schemas["Policies"];
export type PolicyRequest = Schemas["PolicyRequest"];
export type PolicyPattern = Schemas["PolicyPattern"];
export type Change = Schemas["ChangeItem"];
export type Changes = Schemas["Changes"];
export type Webhook = Schemas["Webhook"];
export type WebhookRequest = Schemas["WebhookRequest"];
export type WebhookTest = Schemas["WebhookTest"];
export type WebhookUpdate = Schemas["WebhookUpdate"];
export type WebhookResend = Schemas["WebhookResend"];
export type WebhookDelivery = Schemas["WebhookDelivery"];
export type WebhookAttempt = Schemas["WebhookAttempt"];
export { verifyWebhook, WebhookVerificationError } from "./webhooks.js";

/** An answer to a question, with the cited beliefs themselves. */
export type Answer = AskAnswer & { cited: Belief[] };

/** The version of the API this client speaks: its OpenAPI document's. */
export const VERSION = "1.0.0";

/** The HTTP methods of the API's operations. */
type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** A time for the API: a Date, RFC 3339, or a date like 2026-03-20. */
export type TimeLike = Date | string;

/** A retry about to happen, for logs and metrics. */
export interface RetryInfo {
  method: string;
  path: string;
  /** 1 for the first retry. */
  attempt: number;
  /** Milliseconds until it. */
  delay: number;
  error: APIError | TransportError;
}

export interface ClientOptions {
  /** The worker's API; default $CREDO_URL, else http://127.0.0.1:9464. */
  url?: string;
  /** An API key (beliefs keys create); default $CREDO_KEY. */
  key?: string;
  /**
   * Milliseconds each call may take in all (default 30000): connecting, sending, reading
   * the whole answer, retries and the waits between them.
   */
  timeout?: number;
  /** Retries of one call (default 3). */
  maxRetries?: number;
  /** Milliseconds before the first retry of a 5xx or transport failure, doubling after (default 500). */
  backoff?: number;
  /** Called before each retry. */
  onRetry?: (info: RetryInfo) => void;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: typeof fetch;
}

type Op = keyof operations;
type QueryOf<O extends Op> = NonNullable<operations[O]["parameters"]["query"]>;
type JSONOf<R> = R extends { content: { "application/json": infer A } } ? A : never;
type AnswerOf<O extends Op> = JSONOf<operations[O]["responses"][keyof operations[O]["responses"] & (200 | 202)]>;

function env(name: string): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
}

function time(t: TimeLike | undefined): string | undefined {
  return t instanceof Date ? t.toISOString() : t;
}

function isHTTP(url: string): boolean {
  try {
    return /^https?:$/.test(new URL(url).protocol);
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A client of one credo worker's API. Each call ends within the timeout, whatever the
 * server does. A 429 is retried after the server's Retry-After; a 5xx answer or a broken
 * connection is retried, with exponential backoff, for calls that are safe to repeat
 * (reads, questions, and transcripts, which the server deduplicates); a wait that would
 * end past the call's timeout is not made: the failure is thrown at once. No redirect is
 * followed, to another host or to the API's own: a 3xx throws Redirected, naming where it
 * pointed. Every failure is a CredoError: API errors are APIError subclasses with the
 * API's code, an answer of another shape is an InvalidResponse.
 */
export class Client {
  readonly url: string;
  readonly key: string | undefined;
  readonly timeout: number;
  readonly maxRetries: number;
  readonly backoff: number;
  private readonly onRetry: ((info: RetryInfo) => void) | undefined;
  private readonly fetch: typeof fetch;

  constructor(options: ClientOptions = {}) {
    this.url = (options.url ?? env("CREDO_URL") ?? "http://127.0.0.1:9464").replace(/\/+$/, "");
    if (!isHTTP(this.url)) {
      throw new TypeError(`url ${JSON.stringify(this.url)} is not an http:// or https:// address, e.g. http://127.0.0.1:9464`);
    }
    this.key = options.key ?? env("CREDO_KEY");
    this.timeout = options.timeout ?? 30_000;
    if (!(this.timeout > 0)) throw new RangeError(`timeout must be a positive number of milliseconds, not ${this.timeout}`);
    this.maxRetries = options.maxRetries ?? 3;
    this.backoff = options.backoff ?? 500;
    this.onRetry = options.onRetry;
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  // Transcripts and episodes.

  /** Remember one conversation (enqueueTranscripts); extraction runs in the background, wait() waits for it. */
  addTranscript(scope: string, messages: Message[], options: { id?: string; occurredAt?: TimeLike } = {}): Promise<Enqueued> {
    const t: Transcript = { scope, messages };
    if (options.id !== undefined) t.id = options.id;
    if (options.occurredAt !== undefined) t.occurred_at = time(options.occurredAt);
    return this.addTranscripts([t]);
  }

  /** Remember conversations, all or none (enqueueTranscripts); a transcript already stored in its scope is a duplicate. */
  addTranscripts(transcripts: Transcript[]): Promise<Enqueued> {
    return this.call("enqueueTranscripts", "POST", "/v1/transcripts", { body: transcripts, idempotent: true });
  }

  /** The processing state of one transcript (getEpisode). */
  episode(id: number): Promise<Episode> {
    return this.call("getEpisode", "GET", `/v1/episodes/${id}`);
  }

  /**
   * Poll until every episode is applied or failed; throws TimeoutError when one is still
   * pending after options.timeout ms (default 120000; each poll ends by then too), naming
   * each with its attempts and last error (the model server down, say).
   */
  async wait(episodes: Enqueued | number | number[], options: { timeout?: number; poll?: number } = {}): Promise<Episode[]> {
    const ids = typeof episodes === "number" ? [episodes] : Array.isArray(episodes) ? episodes : episodes.episode_ids;
    const deadline = performance.now() + (options.timeout ?? 120_000);
    const done = new Map<number, Episode>();
    const seen = new Map<number, Episode>();
    let cut = false;
    for (;;) {
      for (const id of ids) {
        const left = deadline - performance.now();
        if (done.has(id) || left <= 0) continue;
        let e: Episode;
        try {
          e = await this.call("getEpisode", "GET", `/v1/episodes/${id}`, { timeout: Math.min(this.timeout, left) });
        } catch (err) {
          // A poll cut short by the wait's deadline is the wait's timeout, which says why.
          if (err instanceof TimeoutError && left < this.timeout) {
            cut = true;
            break;
          }
          throw err;
        }
        seen.set(id, e);
        if (e.state !== "pending") done.set(id, e);
      }
      const pending = ids.filter((id) => !done.has(id));
      if (pending.length === 0) return ids.map((id) => done.get(id) as Episode);
      const left = deadline - performance.now();
      if (left <= 0 || cut) {
        const why = pending.map((id) => pendingWhy(id, seen.get(id))).join("; ");
        throw new TimeoutError(`episodes ${pending.join(", ")} still pending: ${why}`);
      }
      await sleep(Math.min(options.poll ?? 250, left));
    }
  }

  // Reading.

  /**
   * Beliefs of a scope (listBeliefs): current ones; the k nearest to query (a question
   * about the past is answered from history); with history, superseded and retracted
   * ones too; what was true asOf a time; what memory held knownAt a time.
   */
  beliefs(
    scope: string,
    options: { query?: string; k?: number; asOf?: TimeLike; knownAt?: TimeLike; history?: boolean; inherit?: boolean } = {},
  ): Promise<Beliefs> {
    const query: QueryOf<"listBeliefs"> = {
      scope,
      query: options.query,
      k: options.k,
      all: options.history || undefined,
      as_of: time(options.asOf),
      known_at: time(options.knownAt),
      inherit: options.inherit || undefined,
    };
    return this.call("listBeliefs", "GET", "/v1/beliefs", { query });
  }

  /** The supersession chain through one belief, oldest first (beliefHistory). */
  async history(id: number): Promise<Belief[]> {
    return (await this.call("beliefHistory", "GET", `/v1/beliefs/${id}/history`)).beliefs;
  }

  /** Revision events of a scope, newest first (listEvents). */
  async events(scope: string, options: { limit?: number } = {}): Promise<Event[]> {
    const query: QueryOf<"listEvents"> = { scope, limit: options.limit };
    return (await this.call("listEvents", "GET", "/v1/events", { query })).events;
  }

  /**
   * How precise the revisions of a scope, or of every scope under scopePrefix, were
   * (audit): applied revisions by origin, action and reason, how many an operator
   * reverted or corrected since, each writer's precision, and the refused revisions with
   * their decisions; only what was made at or after since when given. A key with one
   * scope prefix may give neither scope nor scopePrefix: it audits its prefix.
   */
  audit(options: { scope?: string; scopePrefix?: string; since?: TimeLike } = {}): Promise<Audit> {
    const query: QueryOf<"audit"> = { scope: options.scope, scope_prefix: options.scopePrefix, since: time(options.since) };
    return this.call("audit", "GET", "/v1/audit", { query });
  }

  /** What memory holds for query, as a block for a prompt (getContext): the block is .context. */
  context(
    scope: string,
    query?: string,
    options: { k?: number; budget?: number; inherit?: boolean; asOf?: TimeLike } = {},
  ): Promise<ContextAnswer> {
    const q: QueryOf<"getContext"> = {
      scope,
      query,
      k: options.k,
      budget: options.budget,
      inherit: options.inherit || undefined,
      as_of: time(options.asOf),
    };
    return this.call("getContext", "GET", "/v1/context", { query: q });
  }

  /** A short answer from memory, with the beliefs it cites (ask). */
  async ask(scope: string, question: string, options: { inherit?: boolean } = {}): Promise<Answer> {
    const body: Schemas["AskRequest"] = { scope, question };
    if (options.inherit) body.inherit = true;
    const got = await this.call("ask", "POST", "/v1/ask", { body, idempotent: true });
    const byId = new Map(got.beliefs.map((b) => [b.id, b]));
    const cited = got.citations.flatMap((id) => byId.get(id) ?? []);
    return { ...got, cited };
  }

  // The entity registry.

  /** The entities of a scope, whom its beliefs are about, the user first, then by name (listEntities); a belief's entity is one's key. */
  async listEntities(scope: string): Promise<Entity[]> {
    const query: QueryOf<"listEntities"> = { scope };
    return (await this.call("listEntities", "GET", "/v1/entities", { query })).entities;
  }

  /**
   * One entity of a scope, found by its name or any alias ("my sister", "Sarah"), with its
   * current beliefs by slot and, with history, each slot's chain, oldest first (getEntity).
   * Throws NotFound, whose message names the nearest known name, for a name the scope
   * knows no entity by.
   */
  getEntity(scope: string, name: string, options: { history?: boolean } = {}): Promise<EntityView> {
    const query: QueryOf<"getEntity"> = { scope, history: options.history || undefined };
    return this.call("getEntity", "GET", `/v1/entities/${encodeURIComponent(name)}`, { query });
  }

  /**
   * Say that two names of a scope are one entity (mergeEntities): other's names become
   * aliases of into and its beliefs into's; nothing else changes. Throws InvalidRequest for
   * one entity twice or the user as other, NotFound for an unknown name.
   */
  mergeEntities(merge: MergeRequest): Promise<Merged> {
    return this.call("mergeEntities", "POST", "/v1/entities/merge", { body: merge });
  }

  // The review queue.

  /** The review queue of a scope, oldest first: open items, or every item with all (listConflicts). */
  async conflicts(scope: string, options: { all?: boolean } = {}): Promise<Conflict[]> {
    const query: QueryOf<"listConflicts"> = { scope, all: options.all || undefined };
    return (await this.call("listConflicts", "GET", "/v1/conflicts", { query })).conflicts;
  }

  /** Decide a review item (resolveConflict); throws Refused when it is already resolved or no longer applies. */
  resolve(id: number, action: ResolveRequest["action"], options: { note?: string } = {}): Promise<Decided> {
    const body: ResolveRequest = { action };
    if (options.note !== undefined) body.note = options.note;
    return this.call("resolveConflict", "POST", `/v1/conflicts/${id}/resolve`, { body });
  }

  // An operator's changes.

  /** Assert a belief as an operator (assertBelief); an authoritative one is never changed by extraction or consolidation. */
  assertBelief(belief: AssertRequest): Promise<Revision> {
    return this.call("assertBelief", "POST", "/v1/beliefs", { body: belief });
  }

  /** Correct one belief with a statement, or retract it (correctBelief). */
  correct(id: number, correction: CorrectRequest): Promise<Revision> {
    return this.call("correctBelief", "POST", `/v1/beliefs/${id}/correct`, { body: correction });
  }

  /**
   * Undo one applied revision, an event of events() (revertEvent): a superseded belief is
   * current again as it was and the one that replaced it is retracted as never true;
   * note says why it was wrong. Only the latest revision of a chain: throws Refused, with
   * the reason, for one that a later revision built on, a revert, or an event reverted already.
   */
  revert(eventId: number, options: { note?: string } = {}): Promise<Reverted> {
    const body: RevertRequest | undefined = options.note === undefined ? undefined : { note: options.note };
    return this.call("revertEvent", "POST", `/v1/events/${eventId}/revert`, { body });
  }

  /** Forget beliefs by ids, match, entity (every belief about it, by name or alias) or all (forget): softly, or erased for good with purge. */
  forget(request: ForgetRequest): Promise<Forgotten> {
    return this.call("forget", "POST", "/v1/forget", {
      body: request,
      problem: (f) => ((f.forgotten ?? f.purged ?? f.subtree) ? undefined : "none of forgotten, purged and subtree"),
    });
  }

  // Moving memory.

  /**
   * A scope's memory, or every scope's under scopePrefix, as it streams from one snapshot
   * (exportMemory): the header, then each record, read a line at a time; since keeps what
   * changed at or after it. Written one JSON line each, they are a file importFile takes.
   * Throws TransportError when the export is cut short: its end record never came.
   */
  async *export(options: { scope?: string; scopePrefix?: string; since?: TimeLike } = {}): AsyncGenerator<ExportRecord> {
    const query: QueryOf<"exportMemory"> = { scope: options.scope, scope_prefix: options.scopePrefix, since: time(options.since) };
    const { status, stream } = await this.stream("exportMemory", "/v1/export", query);
    const reader = stream.pipeThrough(new TextDecoderStream() as ReadableWritablePair<string, Uint8Array>).getReader();
    let rest = "";
    let ended = false;
    for (let done = false; !done; ) {
      const chunk = await reader.read();
      done = chunk.done;
      rest += chunk.value ?? "";
      const lines = rest.split("\n");
      rest = done ? "" : (lines.pop() ?? "");
      for (const line of lines) {
        if (!line.trim()) continue;
        let record: ExportRecord;
        try {
          record = JSON.parse(line) as ExportRecord;
        } catch (e) {
          throw new InvalidResponse(status, `GET /v1/export: a line is not JSON: ${(e as Error).message}`);
        }
        ended = record.type === "end";
        yield record;
      }
    }
    if (!ended) throw new TransportError("GET /v1/export: the export was cut short (no end record)");
  }

  /**
   * Import an export (its text or bytes) into scopes that hold nothing (importMemory);
   * scopeMap imports each scope OLD, and those under OLD/, as NEW. from "mem0" reads
   * mem0's exported memories instead, one scope per scopeTemplate (default user:{user_id}).
   * Throws InvalidRequest naming the line of a bad record, Refused when a scope holds
   * memory: nothing is imported.
   */
  importFile(
    file: string | Uint8Array | Blob,
    options: { scopeMap?: Record<string, string>; from?: "credo" | "mem0"; scopeTemplate?: string } = {},
  ): Promise<ImportReport> {
    const query: QueryOf<"importMemory"> = {
      from: options.from,
      scope_template: options.scopeTemplate,
      scope_map: Object.entries(options.scopeMap ?? {}).map(([from, to]) => `${from}=${to}`),
    };
    const contentType = options.from === "mem0" ? "application/json" : "application/x-ndjson";
    return this.call("importMemory", "POST", "/v1/import", { query, raw: { body: file, contentType } });
  }

  // Organisations' policies.

  /**
   * Set the policy of a scope prefix (setPolicy), replacing the one it had: its
   * instructions reach the extraction and consolidation prompts of every scope under it,
   * its kinds and patterns redact what is enqueued there afterwards. A scope's policy is
   * the one of its longest prefix.
   */
  setPolicy(policy: PolicyRequest): Promise<Policy> {
    return this.call("setPolicy", "PUT", "/v1/policies", { body: policy, idempotent: true });
  }

  /**
   * The policies within the key's prefixes, or with scope the one in force there, whose
   * scope_prefix says where it comes from (getPolicies).
   */
  async policies(options: { scope?: string } = {}): Promise<Policy[]> {
    const query: QueryOf<"getPolicies"> = { scope: options.scope };
    return (await this.call("getPolicies", "GET", "/v1/policies", { query })).policies;
  }

  /** Unset the policy of a scope prefix, answered with it (unsetPolicy); throws NotFound when it has none. */
  unsetPolicy(scopePrefix: string): Promise<Policy> {
    const query: QueryOf<"unsetPolicy"> = { scope_prefix: scopePrefix };
    return this.call("unsetPolicy", "DELETE", "/v1/policies", { query });
  }

  // The change feed and webhooks.

  /**
   * What changed in a scope, or in every scope under scopePrefix, after the cursor after,
   * in commit order (listChanges); with wait (seconds, at most 30) an empty read waits for
   * the next change. Pass the answer's cursor as after to read what follows: nothing is
   * missed or given twice.
   */
  changes(
    options: { scope?: string; scopePrefix?: string; after?: string; limit?: number; wait?: number },
  ): Promise<Changes> {
    const query: QueryOf<"listChanges"> = {
      scope: options.scope, scope_prefix: options.scopePrefix, after: options.after, limit: options.limit, wait: options.wait,
    };
    const timeout = options.wait ? Math.max(this.timeout, options.wait * 1000 + 10_000) : undefined;
    return this.call("listChanges", "GET", "/v1/changes", { query, timeout });
  }

  /**
   * Every change after options.after, then each new one as it commits (long polls of
   * options.wait seconds, default 30), forever, each with the cursor to resume from once
   * it is handled (the page's cursor on its last change, the one before on the others).
   */
  async *iterChanges(
    options: { scope?: string; scopePrefix?: string; after?: string; limit?: number; wait?: number },
  ): AsyncGenerator<{ change: Change; cursor: string | undefined }> {
    let cursor = options.after;
    for (;;) {
      const page = await this.changes({ ...options, after: cursor, wait: options.wait ?? 30 });
      for (const [i, change] of page.changes.entries()) {
        yield { change, cursor: i === page.changes.length - 1 ? page.cursor : cursor };
      }
      cursor = page.cursor;
    }
  }

  /**
   * Subscribe a URL to the changes of every scope under scope_prefix (createWebhook). The
   * answer's secret is shown this once: verify deliveries with it (verifyWebhook).
   */
  createWebhook(request: WebhookRequest): Promise<Webhook> {
    return this.call("createWebhook", "POST", "/v1/webhooks", { body: request });
  }

  /** The webhooks within the key's prefixes, with their deliveries' status (listWebhooks). */
  async webhooks(): Promise<Webhook[]> {
    return (await this.call("listWebhooks", "GET", "/v1/webhooks")).webhooks;
  }

  /** Delete a webhook, answered with it (deleteWebhook). */
  deleteWebhook(id: number): Promise<Webhook> {
    const query: QueryOf<"deleteWebhook"> = { id };
    return this.call("deleteWebhook", "DELETE", "/v1/webhooks", { query });
  }

  /** Send a webhook a signed test message now, and its answer (testWebhook). */
  testWebhook(id: number): Promise<WebhookTest> {
    return this.call("testWebhook", "POST", `/v1/webhooks/${id}/test`);
  }

  /** A new secret for a webhook; the old one still signs for a day (rotateWebhookSecret). */
  rotateWebhookSecret(id: number): Promise<Webhook> {
    return this.call("rotateWebhookSecret", "POST", `/v1/webhooks/${id}/rotate`);
  }

  /** Change a webhook's URL or events (empty: every type); what is not given stays (updateWebhook). */
  updateWebhook(id: number, update: WebhookUpdate): Promise<Webhook> {
    return this.call("updateWebhook", "PATCH", `/v1/webhooks/${id}`, { body: update });
  }

  /** Re-enable a disabled webhook; resendWebhook sends again what it missed (enableWebhook). */
  enableWebhook(id: number): Promise<Webhook> {
    return this.call("enableWebhook", "POST", `/v1/webhooks/${id}/enable`);
  }

  /** A webhook's log: its deliveries, newest first, each with its attempts (listWebhookDeliveries). */
  async webhookDeliveries(id: number, options: { state?: WebhookDelivery["state"]; limit?: number } = {}): Promise<WebhookDelivery[]> {
    const query: QueryOf<"listWebhookDeliveries"> = { state: options.state, limit: options.limit };
    return (await this.call("listWebhookDeliveries", "GET", `/v1/webhooks/${id}/deliveries`, { query })).deliveries;
  }

  /**
   * Send again one delivery given up or dropped (message_id), or all of them, under their
   * message ids; answers how many were queued (resendWebhook).
   */
  async resendWebhook(id: number, resend: WebhookResend): Promise<number> {
    return (await this.call("resendWebhook", "POST", `/v1/webhooks/${id}/resend`, { body: resend })).resent;
  }

  // The wire.

  /**
   * One call of operation O: its JSON answer, checked against the shape O promises (and
   * by problem, for what the shape cannot say), or one of the client's errors.
   */
  private async call<O extends Op>(
    op: O,
    method: Method,
    path: string,
    options: CallOptions<O> = {},
  ): Promise<AnswerOf<O>> {
    const shape = answers[op];
    if (shape === null) throw new Error(`${op} does not answer JSON: read it with request()`); // the client's own mistake
    const { status, headers, text } = await this.request(method, path, options);
    const what = `${method} ${path}`;
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch (e) {
      const kind = headers.get("Content-Type") ?? "no content type";
      throw new InvalidResponse(status, `${what}: the answer (${kind}) is not JSON: ${(e as Error).message}`);
    }
    const problem = mismatch(shape, answer) ?? options.problem?.(answer as AnswerOf<O>);
    if (problem !== undefined) {
      throw new InvalidResponse(status, `${what}: the answer is not a ${shape.$ref ?? `${op} answer`}: ${problem}`);
    }
    return answer as AnswerOf<O>;
  }

  /** A GET of operation O that answers a stream, not one JSON document: the body unread. */
  private async stream<O extends Op>(op: O, path: string, query: QueryOf<O>): Promise<{ status: number; stream: ReadableStream<Uint8Array> }> {
    const { status, stream } = await this.request("GET", path, { query, stream: true });
    if (!stream) throw new TransportError(`GET ${path}: the answer to ${op} has no body`);
    return { status, stream };
  }

  /**
   * The request every operation makes: its 2xx answer, or the API's error thrown, all by
   * one deadline, options.timeout ms (default: the client's) from now, retries and their
   * waits included. A 429 is retried always (the server refused before doing anything);
   * the rest only when idempotent (by default: GET). A wait that would end past the
   * deadline is not made: the failure is thrown at once. raw sends a body as it is;
   * stream answers once the server began its answer, the body unread in stream: the
   * deadline is then the answer's start, and reading it may take as long as it takes.
   */
  private async request(
    method: Method,
    path: string,
    options: RequestOptions & { query?: object; stream?: boolean } = {},
  ): Promise<Answered> {
    const idempotent = options.idempotent ?? method === "GET";
    const timeout = options.timeout ?? this.timeout;
    const deadline = performance.now() + timeout;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(options.query ?? {})) {
      for (const one of Array.isArray(v) ? v : [v]) {
        if (one !== undefined && one !== null) params.append(k, String(one));
      }
    }
    const search = params.toString();
    const url = this.url + path + (search ? `?${search}` : "");
    const headers: Record<string, string> = { Accept: "application/json", "User-Agent": `credo-typescript/${VERSION}` };
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    if (options.raw) headers["Content-Type"] = options.raw.contentType;
    if (this.key) headers.Authorization = `Bearer ${this.key}`;
    const body = (options.raw ? options.raw.body : options.body === undefined ? undefined : JSON.stringify(options.body)) as BodyInit | undefined;

    for (let attempt = 0; ; attempt++) {
      let failure: APIError | TransportError;
      try {
        const abort = new AbortController();
        const left = Math.max(0, Math.ceil(deadline - performance.now()));
        const timer = setTimeout(() => abort.abort(new DOMException("no answer in time", "TimeoutError")), left);
        try {
          // Never followed (see Redirected): fetch's own following keeps the key for the
          // same origin only, but turns a POST into a GET and answers for another host.
          const res = await this.fetch(url, { method, headers, body, signal: abort.signal, redirect: "manual" });
          if (res.type === "opaqueredirect" || (res.status >= 300 && res.status < 400)) {
            await res.body?.cancel().catch(() => {});
            throw redirected(`${method} ${path}`, res);
          }
          if (options.stream && res.ok) return { status: res.status, headers: res.headers, text: "", stream: res.body };
          // The signal ends the body's reading too: the whole exchange is within the deadline.
          const text = await res.text();
          if (res.ok) return { status: res.status, headers: res.headers, text };
          failure = apiError(res.status, res.headers, text);
        } finally {
          clearTimeout(timer);
        }
      } catch (e) {
        if (e instanceof Redirected) throw e;
        failure = transportError(method, path, timeout, e);
      }
      if (!retried(failure, idempotent) || attempt >= this.maxRetries) throw failure;
      let delay = this.backoff * 2 ** attempt * (0.5 + Math.random() / 2);
      if (failure instanceof RateLimited && failure.retryAfter !== undefined) delay = failure.retryAfter * 1000;
      if (performance.now() + delay >= deadline) throw failure;
      this.onRetry?.({ method, path, attempt: attempt + 1, delay, error: failure });
      await sleep(delay);
    }
  }
}

/** What a request may say besides its method and path. */
interface RequestOptions {
  body?: unknown;
  /** A body sent as it is, in place of a JSON one. */
  raw?: { body: string | Uint8Array | Blob; contentType: string };
  /** Safe to send again after a 5xx or a broken connection (default: GET). */
  idempotent?: boolean;
  /** Milliseconds for the whole call (default: the client's timeout). */
  timeout?: number;
}

/** What one call of operation O may say besides its method and path. */
interface CallOptions<O extends Op> extends RequestOptions {
  query?: QueryOf<O>;
  problem?: (answer: AnswerOf<O>) => string | undefined;
}

/** A 2xx answer: its body read as text, or, for a stream, left unread in stream. */
interface Answered {
  status: number;
  headers: Headers;
  text: string;
  stream?: ReadableStream<Uint8Array> | null;
}

/** Whether a failed request is sent again (time allowing). */
function retried(failure: APIError | TransportError, idempotent: boolean): boolean {
  if (failure instanceof RateLimited) return true; // refused before anything was done
  if (failure instanceof TimeoutError) return false; // the deadline passed: no time is left
  return idempotent && (failure instanceof ServerError || failure instanceof TransportError);
}

function transportError(method: string, path: string, timeout: number, e: unknown): TransportError {
  const name = (e as { name?: string } | null)?.name;
  if (name === "TimeoutError" || name === "AbortError") {
    return new TimeoutError(`${method} ${path}: no complete answer within ${timeout} ms`, { cause: e });
  }
  const cause = (e as { cause?: { message?: string } } | null)?.cause;
  return new TransportError(`${method} ${path}: ${cause?.message ?? String(e)}`, { cause: e });
}

/** Why episode id is still pending, as far as its last state says. */
function pendingWhy(id: number, e: Episode | undefined): string {
  if (e === undefined) return `${id}: not read before the deadline`;
  if (e.attempts === 0) return `${id}: not tried yet (is a worker running?)`;
  return `${id}: ${e.attempts} attempts, last error: ${e.last_error ?? "none"}`;
}
