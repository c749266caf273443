// Reads a WACZ the way a replay tool does, with warcio.js: the zip's
// central directory, indexes/index.cdxj, and for each index line the
// record at its offset inside the stored archive/ member, parsed by
// warcio's WARCParser, whose WARC-Target-URI must be the line's url.
// Usage: node wacz_read.cjs WARCIO_INDEX_CJS FILE.wacz; prints the count.
const fs = require('fs');
const zlib = require('zlib');
const { WARCParser } = require(process.argv[2]);
const buf = fs.readFileSync(process.argv[3]);
let e = buf.length - 22;
while (e >= 0 && buf.readUInt32LE(e) !== 0x06054b50) e--;
if (e < 0) throw new Error('no end of central directory');
const count = buf.readUInt16LE(e + 10);
const files = {};
for (let i = 0, p = buf.readUInt32LE(e + 16); i < count; i++) {
  const nl = buf.readUInt16LE(p + 28), xl = buf.readUInt16LE(p + 30), cl = buf.readUInt16LE(p + 32);
  files[buf.toString('utf8', p + 46, p + 46 + nl)] = {
    method: buf.readUInt16LE(p + 10), size: buf.readUInt32LE(p + 20), local: buf.readUInt32LE(p + 42),
  };
  p += 46 + nl + xl + cl;
}
function data(name) {
  const f = files[name];
  if (!f) throw new Error('no member ' + name);
  const start = f.local + 30 + buf.readUInt16LE(f.local + 26) + buf.readUInt16LE(f.local + 28);
  const raw = buf.subarray(start, start + f.size);
  return f.method === 0 ? raw : zlib.inflateRawSync(raw);
}
(async () => {
  let n = 0;
  for (const line of data('indexes/index.cdxj').toString().trim().split('\n')) {
    const js = JSON.parse(line.slice(line.indexOf('{')));
    if (files['archive/' + js.filename].method !== 0) throw new Error(js.filename + ' is not stored');
    const w = data('archive/' + js.filename);
    const rec = await new WARCParser([w.subarray(+js.offset, +js.offset + +js.length)]).parse();
    if (!rec || rec.warcTargetURI !== js.url) throw new Error('line ' + line + ' resolves to ' + (rec && rec.warcTargetURI));
    n++;
  }
  console.log(n);
})().catch((err) => { console.error(err.message); process.exit(1); });
