// Reads a livemon recording with the official MCAP reader (@mcap/core) and checks it against what
// `livemonctl info --json` says about the same file: messages as MCAP counts them, events as the
// messages' batches hold them (docs/recording-format.md). Exits 1 with the differences listed.
//
//   node mcap_interop.mjs RECORDING.mcap INFO.json
import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { decode } from "@msgpack/msgpack";
import { decompress } from "fzstd";
import { open, readFile } from "node:fs/promises";

const [path, infoPath] = process.argv.slice(2);
const infoText = await readFile(infoPath, "utf8");
const info = JSON.parse(infoText);
// Nanosecond times exceed 2^53, which JSON.parse rounds: take them from the text.
const bigField = (name) => BigInt(infoText.match(new RegExp(`"${name}": (\\d+)`))[1]);
info.start_ns = bigField("start_ns");
info.end_ns = bigField("end_ns");
const problems = [];
const expect = (ok, what) => { if (!ok) problems.push(what); };
const decompressHandlers = { zstd: (data, size) => decompress(data, new Uint8Array(Number(size))) };

// 1. The indexed reader: summary, statistics and every message through the chunk indexes.
const handle = await open(path, "r");
const size = (await handle.stat()).size;
const readable = {
  size: async () => BigInt(size),
  read: async (offset, length) => {
    const bytes = new Uint8Array(Number(length));
    await handle.read(bytes, 0, Number(length), Number(offset));
    return bytes;
  },
};
const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers });
const channels = [...reader.channelsById.values()];
expect(channels.length === info.channels.length, `channels: ${channels.length} vs info ${info.channels.length}`);
for (const expected of info.channels) {
  const channel = reader.channelsById.get(expected.id);
  expect(channel && channel.topic === expected.topic, `channel ${expected.id}: topic ${channel?.topic} vs ${expected.topic}`);
  expect(channel && channel.messageEncoding === "msgpack", `channel ${expected.id}: encoding ${channel?.messageEncoding}`);
  expect(channel && channel.schemaId === 0, `channel ${expected.id}: schema ${channel?.schemaId}`);
  const format = channel?.metadata.get("livemon.format");
  expect(format === String(info.format), `channel ${expected.id}: format ${format} vs info ${info.format}`);
  const count = reader.statistics?.channelMessageCounts.get(expected.id);
  expect(count === BigInt(expected.messages), `channel ${expected.id}: ${count} messages vs info ${expected.messages}`);
}
expect(reader.statistics?.messageCount === BigInt(info.messages), `statistics: ${reader.statistics?.messageCount} vs ${info.messages}`);
expect(reader.statistics?.messageStartTime === BigInt(info.start_ns), `start ${reader.statistics?.messageStartTime} vs ${info.start_ns}`);
expect(reader.statistics?.messageEndTime === BigInt(info.end_ns), `end ${reader.statistics?.messageEndTime} vs ${info.end_ns}`);
expect(reader.chunkIndexes.length === info.chunks, `chunk indexes: ${reader.chunkIndexes.length} vs ${info.chunks}`);

// 2. Every payload decodes as a version-1 wire message holding a batch of events of the channel's
// name, the first at the message's publish_time; a batch splits into events as info counts them.
const perTopic = new Map();
const messagesPerTopic = new Map();
const perSource = new Map();
let read = 0;
let events = 0;
let batched = 0;
let first = null;
let last = null;
for await (const message of reader.readMessages()) {
  read++;
  const topic = reader.channelsById.get(message.channelId).topic;
  messagesPerTopic.set(topic, (messagesPerTopic.get(topic) ?? 0) + 1);
  first = first === null || message.logTime < first ? message.logTime : first;
  last = last === null || message.logTime > last ? message.logTime : last;
  const payload = decode(message.data, { useBigInt64: true });
  expect(payload.v === 1n || payload.v === 1, `message ${read}: version ${payload.v}`);
  expect(payload.kind === "events", `message ${read}: kind ${payload.kind}`);
  expect(payload.name === topic, `message ${read}: name ${payload.name} on topic ${topic}`);
  expect(Array.isArray(payload.events) && payload.events.length >= 1, `message ${read}: no events`);
  const n = payload.events?.length ?? 0;
  if (n === 0) continue;
  expect(BigInt(payload.events[0][0]) === message.publishTime, `message ${read}: event time ${payload.events[0][0]} vs publish_time ${message.publishTime}`);
  expect(payload.steps === undefined || payload.steps.length === n, `message ${read}: ${payload.steps?.length} steps for ${n} events`);
  events += n;
  batched += n > 1 ? 1 : 0;
  perTopic.set(topic, (perTopic.get(topic) ?? 0) + n);
  const key = `${payload.src.run}|${payload.src.host}|${payload.src.pid}|${BigInt(payload.src.id).toString(16).padStart(16, "0")}`;
  perSource.set(key, (perSource.get(key) ?? 0) + n);
  if (problems.length > 20) break;
}
expect(read === info.messages, `read ${read} messages vs info ${info.messages}`);
expect(events === info.events, `${events} events in the messages vs info ${info.events}`);
expect(first === BigInt(info.start_ns) && last === BigInt(info.end_ns), `time range ${first}..${last} vs ${info.start_ns}..${info.end_ns}`);
for (const expected of info.channels) {
  expect((perTopic.get(expected.topic) ?? 0) === expected.events, `topic ${expected.topic}: ${perTopic.get(expected.topic)} events vs ${expected.events}`);
  expect((messagesPerTopic.get(expected.topic) ?? 0) === expected.messages, `topic ${expected.topic}: ${messagesPerTopic.get(expected.topic)} messages vs ${expected.messages}`);
}
for (const source of info.sources) {
  const key = `${source.run}|${source.host}|${source.pid}|${source.id}`;
  expect(perSource.get(key) === source.events, `source ${key}: ${perSource.get(key)} vs ${source.events}`);
}
expect(perSource.size === info.sources.length, `sources: ${perSource.size} vs ${info.sources.length}`);
await handle.close();

// 3. The streaming reader, checking every CRC on the way.
const stream = new McapStreamReader({ validateCrcs: true, decompressHandlers });
stream.append(await readFile(path));
let streamed = 0;
for (let record; (record = stream.nextRecord()); ) if (record.type === "Message") streamed++;
expect(stream.done(), "the streaming reader did not reach the end of the file");
expect(streamed === info.messages, `streamed ${streamed} messages vs info ${info.messages}`);

if (problems.length) {
  console.error(`${path}: the official MCAP reader disagrees with livemonctl info:\n  ` + problems.join("\n  "));
  process.exit(1);
}
console.log(`${path}: @mcap/core read ${read} messages (${batched} of them batches) holding ${events} events on ${channels.length} channels, matching livemonctl info`);
