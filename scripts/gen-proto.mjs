#!/usr/bin/env node
// Writes proto/orch.io/**/generated.proto from the kind declarations (src/machinery/proto-source.ts), for
// clients that generate code from .proto files. Run after changing a declaration, from the repository root:
//   npx tsc -p tsconfig.json && node scripts/gen-proto.mjs
// test/machinery/protobuf.test.ts fails while the committed files differ from what this writes.
import {mkdirSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {declarations as authentication} from '../dist/src/api/authentication/index.js'
import {declarations as authorization} from '../dist/src/api/authorization/index.js'
import {allDeclarations} from '../dist/src/api/index.js'
import {protoSource} from '../dist/src/machinery/proto-source.js'

const root = join(import.meta.dirname, '..', 'proto')
for (const [file, text] of protoSource([...allDeclarations, ...authorization, ...authentication])) {
  const path = join(root, file)
  mkdirSync(dirname(path), {recursive: true})
  writeFileSync(path, text)
  console.log(`wrote proto/${file}`)
}
