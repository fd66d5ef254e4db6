import type { Transport } from "./http.js";
import { PageList } from "./pagination.js";
import { pageQuery, param } from "./params.js";
import type { ApiKey, CreatedApiKey, CreateKeyInput, ListOptions, Page } from "./types.js";

/** API keys of a project (admin key). */
export class KeysApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  /** Creates a key (`POST /projects/{projectId}/keys`); the answer holds the secret, shown only this once. */
  async create(projectId: string, input: CreateKeyInput): Promise<CreatedApiKey> {
    const path = `/projects/${param("projectId", projectId)}/keys`;
    return (await this.http.request<CreatedApiKey>({ method: "POST", path, body: input })).body;
  }

  /** Lists the project's keys, oldest first, without secrets (`GET /projects/{projectId}/keys`). */
  list(projectId: string, options: ListOptions = {}): PageList<ApiKey> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/keys`;
      return (await this.http.request<Page<ApiKey>>({ method: "GET", path, query: pageQuery(page) })).body;
    }, options.limit);
  }

  /**
   * Renames a key (`PATCH /projects/{projectId}/keys/{keyId}`): its label only, recorded as `key.updated`;
   * the history names the key's later changes so. 404 `key_not_found`.
   */
  async rename(projectId: string, keyId: string, name: string): Promise<ApiKey> {
    const path = `/projects/${param("projectId", projectId)}/keys/${param("keyId", keyId)}`;
    return (await this.http.request<ApiKey>({ method: "PATCH", path, body: { name } })).body;
  }

  /** Revokes a key at once (`DELETE /projects/{projectId}/keys/{keyId}`). */
  async revoke(projectId: string, keyId: string): Promise<void> {
    const path = `/projects/${param("projectId", projectId)}/keys/${param("keyId", keyId)}`;
    await this.http.request<void>({ method: "DELETE", path });
  }
}
