// A minimal streaming writer of POSIX ustar archives: regular files, directories and symbolic links.
// Data goes to a sink in large chunks; a file's size is declared up front, so big files (memory
// dumps) are streamed without being held in memory.

const BLOCK = 512
const FILE = '0'
const SYMLINK = '2'
const DIRECTORY = '5'

export interface EntryOptions {
  /** permission bits; default 0600 for files, 0700 for directories, 0777 for links */
  mode?: number
  /** modification time; default now */
  mtime?: Date
  uid?: number
  gid?: number
}

export class TarWriter {
  private buffered: Buffer[] = []
  private bufferedBytes = 0
  /** bytes of the current file still to be written, or -1 outside a file */
  private remaining = -1
  private currentSize = 0
  private finished = false
  /** bytes handed to the sink so far (plus what is buffered) */
  bytes = 0

  constructor(
    private readonly sink: (chunk: Buffer) => Promise<void>,
    private readonly flushBytes = 1 << 20,
  ) {}

  async addFile(name: string, data: Buffer | string, options: EntryOptions = {}): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data
    await this.beginFile(name, bytes.length, options)
    await this.write(bytes)
    await this.endFile()
  }

  async addDirectory(name: string, options: EntryOptions = {}): Promise<void> {
    this.assertIdle()
    await this.push(header(name.endsWith('/') ? name : `${name}/`, 0, DIRECTORY, '', {mode: 0o700, ...options}))
  }

  async addSymlink(name: string, target: string, options: EntryOptions = {}): Promise<void> {
    this.assertIdle()
    await this.push(header(name, 0, SYMLINK, target, {mode: 0o777, ...options}))
  }

  /** Starts a regular file of `size` bytes; write() exactly that many bytes, then endFile(). */
  async beginFile(name: string, size: number, options: EntryOptions = {}): Promise<void> {
    this.assertIdle()
    if (!Number.isSafeInteger(size) || size < 0) throw new Error(`tar: bad size ${size} for ${name}`)
    await this.push(header(name, size, FILE, '', {mode: 0o600, ...options}))
    this.remaining = size
    this.currentSize = size
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.remaining < 0) throw new Error('tar: write() outside a file')
    if (chunk.length > this.remaining) throw new Error(`tar: ${chunk.length} bytes written past the declared size`)
    this.remaining -= chunk.length
    await this.push(chunk)
  }

  async endFile(): Promise<void> {
    if (this.remaining !== 0) throw new Error(`tar: file ended ${this.remaining} bytes short of its declared size`)
    this.remaining = -1
    const pad = (BLOCK - (this.currentSize % BLOCK)) % BLOCK
    if (pad > 0) await this.push(Buffer.alloc(pad))
  }

  /** Writes the end-of-archive marker (two zero blocks) and flushes. */
  async finish(): Promise<void> {
    this.assertIdle()
    this.finished = true
    await this.push(Buffer.alloc(2 * BLOCK))
    await this.flush()
  }

  private assertIdle(): void {
    if (this.finished) throw new Error('tar: archive already finished')
    if (this.remaining >= 0) throw new Error('tar: previous file not ended')
  }

  private async push(chunk: Buffer): Promise<void> {
    this.buffered.push(chunk)
    this.bufferedBytes += chunk.length
    this.bytes += chunk.length
    if (this.bufferedBytes >= this.flushBytes) await this.flush()
  }

  private async flush(): Promise<void> {
    if (this.bufferedBytes === 0) return
    const data = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered, this.bufferedBytes)
    this.buffered = []
    this.bufferedBytes = 0
    await this.sink(data)
  }
}

/** One 512-byte ustar header. */
function header(path: string, size: number, type: string, linkTarget: string, options: EntryOptions): Buffer {
  const block = Buffer.alloc(BLOCK)
  const [prefix, name] = splitName(path)
  block.write(name, 0, 100, 'utf8')
  octal(block, 100, 8, options.mode ?? 0o600)
  octal(block, 108, 8, options.uid ?? 0)
  octal(block, 116, 8, options.gid ?? 0)
  sizeField(block, size)
  octal(block, 136, 12, Math.floor((options.mtime ?? new Date()).getTime() / 1000))
  block.write(type, 156, 1, 'latin1')
  if (Buffer.byteLength(linkTarget) > 100) throw new Error(`tar: link target too long: ${linkTarget}`)
  block.write(linkTarget, 157, 100, 'utf8')
  block.write('ustar\0', 257, 6, 'latin1')
  block.write('00', 263, 2, 'latin1')
  block.write(prefix, 345, 155, 'utf8')
  // checksum: sum of all bytes with the checksum field taken as spaces
  block.fill(0x20, 148, 156)
  let sum = 0
  for (const byte of block) sum += byte
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1')
  return block
}

/** ustar keeps paths up to 100 bytes in `name`, longer ones split at a slash into prefix (155) + name. */
function splitName(path: string): [string, string] {
  if (Buffer.byteLength(path) <= 100) return ['', path]
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i)
    const name = path.slice(i + 1)
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name.length > 0) return [prefix, name]
  }
  throw new Error(`tar: path too long for ustar: ${path}`)
}

function octal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'latin1')
}

/** Sizes up to 8 GiB - 1 in octal; larger ones in the base-256 form GNU tar and others read. */
function sizeField(block: Buffer, size: number): void {
  if (size < 8 ** 11) {
    octal(block, 124, 12, size)
    return
  }
  let rest = BigInt(size)
  for (let i = 135; i > 124; i--) {
    block[i] = Number(rest & 0xffn)
    rest >>= 8n
  }
  block[124] = 0x80
}
