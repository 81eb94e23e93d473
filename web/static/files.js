// Reading the folder's files: gzipped ones (graphs, the wasm binary, the tokenizer) are inflated in the browser,
// so any static host serves them small without being configured for it.
export async function fetchBytes(url, onBytes = () => {}) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const counted = response.body.pipeThrough(new TransformStream({
    transform(chunk, controller) {
      onBytes(chunk.byteLength);
      controller.enqueue(chunk);
    },
  }));
  const body = url.endsWith(".gz") ? counted.pipeThrough(new DecompressionStream("gzip")) : counted;
  return new Uint8Array(await new Response(body).arrayBuffer());
}

export async function fetchJson(url) {
  return JSON.parse(new TextDecoder().decode(await fetchBytes(url)));
}
