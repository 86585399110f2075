// The typed client of the Provider Error Recovery API.
//
// `schema.ts` is generated from clients/openapi.json by openapi-typescript
// (`scripts/clients generate`; never edit it by hand); this file only adds a
// `createClient` that knows the base URL and the API token, and short names
// for the types an adapter uses. Requests go through openapi-fetch: every
// path, parameter, body and answer is typed from the document, e.g.
//
//   const api = createClient({ baseUrl: "http://127.0.0.1:3000", token });
//   const { data, error, response } = await api.GET("/api/v1/routes/{id}", {
//     params: { path: { id: routeId } },
//   });
//
// openapi-fetch never throws for an HTTP status: `data` is set on a 2xx,
// `error` (the API's error body) otherwise, and `response` is the raw
// answer (its status and headers, e.g. `retry-after`).
import createFetchClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

type Schemas = components["schemas"];
export type ApiError = Schemas["ApiError"];
export type ClaimAnswer = Schemas["ClaimAnswer"];
export type DecisionKind = Schemas["DecisionKind"];
export type Dispatch = Schemas["Dispatch"];
export type FailureAnswer = Schemas["FailureAnswer"];
export type Profile = Schemas["Profile"];
export type ProfileWrite = Schemas["ProfileWrite"];
export type RouteSnapshot = Schemas["RouteSnapshot"];
export type RouteState = Schemas["RouteState"];

/** A client typed by the OpenAPI document. */
export type RecoveryClient = Client<paths>;

export interface ClientOptions {
  /** The service, e.g. `http://127.0.0.1:3000` (the paths carry `/api/v1`). */
  baseUrl: string;
  /** An API token (`kandev-recovery token create`), sent as `Authorization: Bearer`. */
  token: string;
  /** Another `fetch` (tests, proxies); the global one by default. */
  fetch?: typeof globalThis.fetch;
}

/** A client for the service at `baseUrl` that sends `token` with every request. */
export function createClient({ baseUrl, token, fetch }: ClientOptions): RecoveryClient {
  return createFetchClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ""),
    headers: { Authorization: `Bearer ${token}` },
    ...(fetch ? { fetch } : {}),
  });
}
