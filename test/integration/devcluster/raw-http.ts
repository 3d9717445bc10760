/**
 * A tiny HTTP helper for dev-cluster tests that must see exact status codes, headers and bodies
 * (client-node hides some of them). Loopback only.
 */
export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export async function raw(baseUrl: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  const init: RequestInit = { method, headers: { Accept: 'application/json', ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, init);
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** The item names of a list body, in order. */
export function itemNames(list: { items: ReadonlyArray<{ metadata?: { name?: string } }> }): Array<string | undefined> {
  return list.items.map((i) => i.metadata?.name);
}

/** Parses the Status body of a client-node ApiException. */
export function statusOf(e: unknown): { code: number; reason: string; message: string; details?: any } {
  const err = e as { code?: number; body?: unknown };
  const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
  return body as { code: number; reason: string; message: string; details?: any };
}

/** Resolves when `predicate()` holds, polling every 10 ms; rejects after `timeoutMs`. */
export async function eventually(predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
