// A response body read with a ceiling: what another server answers is not ours to hold whole.

/** The body up to `maxBytes`; `complete` false when there was more, which is then not read. */
export async function readUpTo(
  response: Response,
  maxBytes: number,
): Promise<{ text: string; complete: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { text: "", complete: true };
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      chunks.push(value.subarray(0, value.byteLength - (size - maxBytes)));
      await reader.cancel();
      return { text: Buffer.concat(chunks).toString("utf8"), complete: false };
    }
    chunks.push(value);
  }
  return { text: Buffer.concat(chunks).toString("utf8"), complete: true };
}
