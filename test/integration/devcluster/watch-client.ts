/**
 * A raw watch reader for dev-cluster tests: collects the newline-delimited events of one watch
 * request and tells when the server ended the stream.
 */
export interface WatchHandle {
  status: number;
  events: any[];
  ended: boolean;
  /** resolves when at least `n` events arrived (rejects after timeoutMs) */
  waitFor(n: number, timeoutMs?: number): Promise<any[]>;
  waitEnd(timeoutMs?: number): Promise<void>;
  close(): void;
}

export async function openWatch(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<WatchHandle> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}${path}`, { signal: controller.signal, headers });
  const handle: WatchHandle = {
    status: res.status,
    events: [],
    ended: false,
    async waitFor(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (handle.events.length < n) {
        if (Date.now() > deadline)
          throw new Error(`watch: expected ${n} events, got ${handle.events.length}: ${JSON.stringify(handle.events.map((e) => e.type))}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      return handle.events;
    },
    async waitEnd(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!handle.ended) {
        if (Date.now() > deadline) throw new Error('watch did not end');
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    close() {
      controller.abort();
    },
  };
  void (async () => {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as any as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (line.trim()) handle.events.push(JSON.parse(line));
        }
      }
    } catch {
      // aborted
    }
    handle.ended = true;
  })();
  return handle;
}
