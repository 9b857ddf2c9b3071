// Bytes as Node's Buffer without copying them.

/** The same bytes as a Buffer: the value itself when it is one, else a view of its memory (no copy). */
export function asBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
}
