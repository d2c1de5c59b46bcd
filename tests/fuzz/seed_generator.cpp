// Writes the fuzz targets' seed corpora with livemon's own encoders and recording writer, so
// fuzzing starts from inputs that reach deep: every value type, batches, heartbeats, goodbyes,
// sequences with gaps and duplicates, recordings with one or several chunks, with and without a
// summary, and cut short.
// Usage: livemon_fuzz_seeds DIR  — writes DIR/<target>/<name> for each target.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <livemon/clock.h>
#include <livemon/transport/curve.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/transport/wire_format.h>

#include "fuzz_support.h"

namespace {

using namespace livemon;
using namespace livemon::transport;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto kT0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'763'830'800));  // 2025-11-22 17:00 UTC

void writeFile(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

SourceInfo source(std::string run, int64_t pid, std::optional<int64_t> rank) {
  SourceInfo info;
  info.run = std::move(run);
  info.host = "node-1";
  info.pid = pid;
  info.rank = rank;
  info.instanceId = 0x1234'5678'9abc'def0ULL + static_cast<uint64_t>(pid);
  info.startTime = kT0 - 1h;
  return info;
}

Event event(std::string name, std::chrono::milliseconds at, std::unordered_map<std::string, DataValue> data,
            std::optional<int64_t> step = std::nullopt) {
  return Event{std::move(name), kT0 + at, std::move(data), step};
}

PublisherCounters counters(uint64_t published) {
  PublisherCounters c;
  c.timestamp = kT0 + 5s;
  c.interval = 1000ms;
  c.published = published;
  c.dropped = 3;
  return c;
}

struct WireSample {
  std::string name;
  std::string topic;
  std::string payload;
};

std::vector<WireSample> wireSamples() {
  const SourceInfo trainer = source("train", 100, 0);
  const SourceInfo evaluator = source("eval-ü", 200, std::nullopt);
  std::vector<WireSample> samples;
  auto events = [&](std::string name, const SourceInfo& from, uint64_t sequence, std::vector<Event> batch) {
    const std::string topic = batch.empty() ? "empty" : batch.front().name;
    samples.push_back({std::move(name), topic, encodeEventsPayload(from, sequence, topic, batch)});
  };
  events("double", trainer, 0, {event("livemon.Stat", 0ms, {{"loss.mean", 0.25}, {"loss.count", 100.0}})});
  events("int", trainer, 1, {event("step", 1ms, {{"step", int64_t{42}}, {"neg", int64_t{-7}},
                                                  {"big", std::numeric_limits<int64_t>::max()},
                                                  {"small", std::numeric_limits<int64_t>::min()}})});
  events("bool", trainer, 2, {event("flags", 2ms, {{"done", true}, {"failed", false}})});
  events("string", evaluator, 0, {event("note", 3ms, {{"text", std::string("best, \"so far\" ✓")}, {"", std::string()}})});
  events("special_doubles", trainer, 3,
         {event("odd", 4ms, {{"nan", std::nan("")}, {"inf", HUGE_VAL}, {"ninf", -HUGE_VAL}, {"zero", -0.0},
                             {"tiny", std::numeric_limits<double>::denorm_min()}})});
  events("mixed", evaluator, 1,
         {event("eval", 5ms, {{"accuracy", 0.75}, {"epoch", int64_t{2}}, {"final", true}, {"tag", std::string("a")}})});
  events("empty_data", trainer, 4, {event("tick", 6ms, {})});
  std::vector<Event> batch;
  for (int i = 0; i < 5; ++i) batch.push_back(event("batch", std::chrono::milliseconds(10 + i), {{"i", int64_t{i}}}));
  events("batch", trainer, 5, batch);
  // Steps: every event with one, and some with and some without (nil) in one batch.
  events("step", trainer, 6, {event("livemon.Stat", 20ms, {{"loss.mean", 0.5}}, 1200)});
  std::vector<Event> stepped;
  for (int i = 0; i < 4; ++i) {
    stepped.push_back(event("steps", std::chrono::milliseconds(30 + i), {{"i", int64_t{i}}},
                            i == 1 ? std::nullopt : std::optional<int64_t>(i == 3 ? -1 : 1000 * i)));
  }
  events("mixed_steps", trainer, 7, stepped);
  // A torchrun rank: world size and local rank beside the rank.
  SourceInfo ranked = source("train", 300, 5);
  ranked.worldSize = 8;
  ranked.localRank = 1;
  events("world_and_local_rank", ranked, 0, {event("livemon.Stat", 40ms, {{"loss.mean", 0.5}})});
  samples.push_back({"heartbeat", std::string(kHeartbeatTopic),
                     encodeHeartbeatPayload(MessageKind::Heartbeat, trainer, 0, counters(10))});
  samples.push_back({"goodbye", std::string(kHeartbeatTopic),
                     encodeHeartbeatPayload(MessageKind::Goodbye, evaluator, 1, counters(2))});
  return samples;
}

void writeWireDecoderSeeds(const fs::path& dir) {
  for (const WireSample& sample : wireSamples()) {
    writeFile(dir / sample.name, fuzz::wireDecoderInput(sample.topic, sample.payload));
  }
  // A topic that is not the event name, and a payload cut short.
  const WireSample first = wireSamples().front();
  writeFile(dir / "wrong_topic", fuzz::wireDecoderInput("other", first.payload));
  writeFile(dir / "truncated", fuzz::wireDecoderInput(first.topic, first.payload.substr(0, first.payload.size() / 2)));
}

void writeSubscriberSeeds(const fs::path& dir) {
  const SourceInfo trainer = source("train", 100, 0);
  const SourceInfo other = source("train", 101, 1);
  auto payload = [&](const SourceInfo& from, uint64_t sequence, int count) {
    std::vector<Event> batch;
    for (int i = 0; i < count; ++i) {
      batch.push_back(event("step", std::chrono::milliseconds(i), {{"i", int64_t{i}}}, int64_t{i} * 10));
    }
    return encodeEventsPayload(from, sequence, "step", batch);
  };
  const std::string heartbeat = encodeHeartbeatPayload(MessageKind::Heartbeat, trainer, 0, counters(4));
  const std::string goodbye = encodeHeartbeatPayload(MessageKind::Goodbye, trainer, 1, counters(9));
  const std::string hb = std::string(kHeartbeatTopic);

  std::string run;  // a clean run: events in order, heartbeats, a goodbye
  fuzz::appendSubscriberMessage(run, {"step", payload(trainer, 0, 2)});
  fuzz::appendSubscriberMessage(run, {hb, heartbeat});
  fuzz::appendSubscriberMessage(run, {"step", payload(trainer, 2, 3)});
  fuzz::appendSubscriberMessage(run, {hb, goodbye});
  writeFile(dir / "clean_run", run);

  std::string gaps;  // a gap, a repeat, an overlap, an old one
  fuzz::appendSubscriberMessage(gaps, {"step", payload(trainer, 0, 1)});
  fuzz::appendSubscriberMessage(gaps, {"step", payload(trainer, 5, 2)});
  fuzz::appendSubscriberRepeat(gaps);
  fuzz::appendSubscriberMessage(gaps, {"step", payload(trainer, 6, 3)});
  fuzz::appendSubscriberMessage(gaps, {"step", payload(trainer, 1, 1)});
  writeFile(dir / "gaps_and_duplicates", gaps);

  std::string sources;  // several sources, one goes stale, one is forgotten, one comes back
  for (int pid = 0; pid < 6; ++pid) {
    fuzz::appendSubscriberMessage(sources, {"step", payload(source("r", pid, pid), 0, 1)}, pid == 3 ? 5 : 0);
  }
  fuzz::appendSubscriberMessage(sources, {"step", payload(source("r", 0, 0), 1, 1)});
  fuzz::appendSubscriberMessage(sources, {"step", payload(other, 0, 1)}, 4);
  writeFile(dir / "many_sources", sources);

  std::string framing;  // one frame, three frames, then a good message
  fuzz::appendSubscriberMessage(framing, {"step"});
  fuzz::appendSubscriberMessage(framing, {"step", payload(trainer, 0, 1), "extra"});
  fuzz::appendSubscriberMessage(framing, {"step", "not msgpack"});
  fuzz::appendSubscriberMessage(framing, {"step", payload(trainer, 0, 1)});
  writeFile(dir / "bad_framing", framing);

  std::string edge;  // sequence numbers at the top of the range
  fuzz::appendSubscriberMessage(edge, {"step", payload(trainer, std::numeric_limits<uint64_t>::max() - 1, 1)});
  fuzz::appendSubscriberMessage(edge, {"step", payload(trainer, std::numeric_limits<uint64_t>::max(), 1)});
  writeFile(dir / "last_sequence_numbers", edge);

  for (const WireSample& sample : wireSamples()) {
    std::string one;
    fuzz::appendSubscriberMessage(one, {sample.topic, sample.payload});
    writeFile(dir / ("one_" + sample.name), one);
  }
}

// Records `count` events of several names, types and sources, `perChunk` to a chunk.
void record(RecordingWriter& writer, ManualClock& clock, int count, int perChunk) {
  const auto trainer = std::make_shared<const SourceInfo>(source("train", 100, 0));
  const auto evaluator = std::make_shared<const SourceInfo>(source("eval", 200, std::nullopt));
  for (int i = 0; i < count; ++i) {
    ReceivedEvent received;
    const bool eval = i % 4 == 3;
    received.source = eval ? evaluator : trainer;
    received.sequence = static_cast<uint64_t>(eval ? i / 4 : i - i / 4);
    received.event = eval ? event("eval", std::chrono::seconds(i), {{"accuracy", 0.5}, {"note", std::string("ok, \"fine\"")}})
                          : event("livemon.Stat", std::chrono::seconds(i),
                                  {{"loss.mean", 1.0 / (i + 1)}, {"step", int64_t{i}}, {"flag", i == 2}});
    if (i % 2 == 0) received.event.step = i;
    received.receivedAt = received.event.timestamp + 3ms;
    recordEvent(writer, received);
    clock.advance(1s);
    if ((i + 1) % perChunk == 0) writer.flush();
  }
}

void writeRecordingSeeds(const fs::path& dir, const fs::path& scratch) {
  ManualClock clock;
  RecordingWriterOptions options;
  options.clock = &clock;
  options.maxChunkAge = std::chrono::hours(1);
  const fs::path path = scratch / "seed.mcap";

  {
    RecordingWriter writer(path.string(), options);
    record(writer, clock, 4, 100);
    writer.close();
    writeFile(dir / "one_chunk", readFile(path));
  }
  std::string closed;
  {
    RecordingWriter writer(path.string(), options);
    record(writer, clock, 9, 3);
    // What a killed recorder leaves: complete chunks, no summary.
    writer.flush();
    writeFile(dir / "no_summary", readFile(path));
    writer.close();
    closed = readFile(path);
    writeFile(dir / "several_chunks", closed);
  }
  {
    // Format version 2: messages as they arrived, batches of one to five events, some with steps.
    RecordingWriter writer(path.string(), options);
    const SourceInfo trainer = source("train", 100, 0);
    uint64_t sequence = 0;
    for (int m = 0; m < 8; ++m) {
      std::vector<Event> batch;
      for (int i = 0; i <= m % 5; ++i) {
        batch.push_back(event("livemon.Stat", std::chrono::seconds(m * 5 + i), {{"loss.mean", 1.0 / (i + 1)}, {"ok", i == 1}}));
        if (m % 2 == 0) batch.back().step = m * 5 + i;
      }
      const auto at = static_cast<uint64_t>(toWireTime(batch.front().timestamp));
      writer.write("livemon.Stat", at + 3'000'000, at, encodeEventsPayload(trainer, sequence, "livemon.Stat", batch));
      sequence += batch.size();
      if (m == 3) writer.flush();
    }
    writer.close();
    writeFile(dir / "batches", readFile(path));
  }
  writeFile(dir / "truncated_half", std::string_view(closed).substr(0, closed.size() / 2));
  writeFile(dir / "truncated_last_byte", std::string_view(closed).substr(0, closed.size() - 1));
  writeFile(dir / "header_only", std::string_view(closed).substr(0, 40));
  {
    RecordingWriter writer(path.string(), options);
    writer.close();
    writeFile(dir / "empty", readFile(path));
  }
  {
    // Larger than a few memory pages, with text that does not compress: reading past a cut in the
    // middle of a mapped file then touches pages the file no longer has.
    RecordingWriter writer(path.string(), options);
    const auto trainer = std::make_shared<const SourceInfo>(source("train", 100, 0));
    std::mt19937 random(7);
    std::uniform_int_distribution<int> letter('a', 'z');
    for (int i = 0; i < 48; ++i) {
      std::string text(400, ' ');
      for (char& c : text) c = static_cast<char>(letter(random));
      ReceivedEvent received;
      received.source = trainer;
      received.sequence = static_cast<uint64_t>(i);
      received.event = event("log", std::chrono::seconds(i), {{"text", std::move(text)}});
      received.receivedAt = received.event.timestamp;
      recordEvent(writer, received);
      if ((i + 1) % 8 == 0) writer.flush();
    }
    writer.close();
    writeFile(dir / "pages_of_chunks", readFile(path));
  }
  {
    options.zstdLevel = 19;
    RecordingWriter writer(path.string(), options);
    record(writer, clock, 6, 6);
    writer.close();
    writeFile(dir / "zstd_19", readFile(path));
  }
  fs::remove(path);
}

void writeTimeBoundSeeds(const fs::path& dir) {
  const uint64_t start = 1'763'830'800'000'000'000ULL;
  const std::vector<std::pair<std::string, uint64_t>> seeds = {
      {"0", start},
      {"90", start},
      {"1.5", start},
      {"2e3", start},
      {"0.000000007", start},
      {"18446744073", 0},
      {"1e30", start},
      {"2025-11-22T17:00:00Z", start},
      {"2025-11-22T17:00:00.25Z", start},
      {"2024-02-29T23:59:59.999999999Z", 0},
      {"2554-07-21T23:34:33.709551615Z", 0},
      {"2600-01-01T00:00:00Z", 0},
      {"1", std::numeric_limits<uint64_t>::max() - 1'000'000'000ULL},
  };
  int n = 0;
  for (const auto& [text, from] : seeds) writeFile(dir / ("bound_" + std::to_string(n++)), fuzz::timeBoundInput(from, text));
}

// alert_rule: the rules the docs, the tests and the help text show, and near misses.
void writeAlertRuleSeeds(const fs::path& dir) {
  const std::vector<std::string> rules = {
      "nan", "silent", "silent 30s", "silent 250ms", "silent 1.5m", "loss", "train.loss.mean > 10 for 3",
      "eval.accuracy < 0.5", "x >= -1e3", "x <= +2.5 FOR 2 windows", "\"gpu util > %\" > 90", "\"a\\\"b\" < 0",
      "train.loss.mean >> 10", "silent 5 parsecs", "x > 1 for 0", "",
  };
  int n = 0;
  for (const std::string& rule : rules) writeFile(dir / ("rule_" + std::to_string(n++)), rule);
}

// history_protocol: requests and ends as livemon writes them, a refusal, and near misses. The first
// byte chooses the decoder (even: request, odd: end).
void writeHistorySeeds(const fs::path& dir) {
  HistoryRequest filtered;
  filtered.filters = {"livemon.Stat", "eval", ""};
  HistoryEnd end;
  end.messages = 1234;
  end.truncated = true;
  end.oldest = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  HistoryEnd busy;
  busy.error = "busy";
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"request_all", std::string(1, '\0') + encodeHistoryRequest({})},
      {"request_filtered", std::string(1, '\0') + encodeHistoryRequest(filtered)},
      {"end", std::string(1, '\1') + encodeHistoryEnd(end)},
      {"end_empty", std::string(1, '\1') + encodeHistoryEnd({})},
      {"end_busy", std::string(1, '\1') + encodeHistoryEnd(busy)},
      {"end_as_request", std::string(1, '\0') + encodeHistoryEnd(end)},
      {"request_truncated", std::string(1, '\0') + encodeHistoryRequest(filtered).substr(0, 20)},
  };
  for (const auto& [name, bytes] : seeds) writeFile(dir / name, bytes);
}

// history_exchange: readers asking a server (for everything, with filters, again, too many at
// once, too slowly, with junk), and a server answering a reader (in full, "busy", cut short, with
// a malformed end, while live messages pile up).
void writeHistoryExchangeSeeds(const fs::path& dir) {
  using fuzz::appendHistoryExchangeMessage;
  const std::string topic(kHistoryTopic);
  HistoryRequest filtered;
  filtered.filters = {"train", "eval.b"};
  const std::string all = encodeHistoryRequest({});
  const std::string some = encodeHistoryRequest(filtered);
  auto server = [&](const std::vector<std::pair<uint8_t, std::vector<std::string_view>>>& messages) {
    std::string out(1, '\0');
    for (const auto& [flags, frames] : messages) appendHistoryExchangeMessage(out, flags, frames);
    return out;
  };
  std::vector<std::pair<uint8_t, std::vector<std::string_view>>> crowd;
  for (uint8_t reader = 0; reader < 10; ++reader) crowd.push_back({static_cast<uint8_t>(reader << 2), {topic, all}});
  crowd.push_back({fuzz::kHistoryExchangeAdvance | fuzz::kHistoryExchangeTake, {"junk"}});

  SourceInfo source;
  source.run = "seed";
  source.host = "host";
  source.pid = 1;
  source.rank = 0;
  source.instanceId = 7;
  source.startTime = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  std::vector<std::string> steps;
  for (uint64_t i = 0; i < 3; ++i) {
    steps.push_back(encodeEventsPayload(source, i, "train.loss", {Event{"train.loss", source.startTime, {{"v", 1.0}}}}));
  }
  HistoryEnd end;
  end.messages = 3;
  end.oldest = source.startTime;
  HistoryEnd busy;
  busy.error = "busy";
  const std::string endPayload = encodeHistoryEnd(end);
  const std::string busyPayload = encodeHistoryEnd(busy);
  const std::string bulkX(1500, 'x');
  const std::string bulkY(1500, 'y');
  auto reader = [&](const std::vector<std::pair<uint8_t, std::vector<std::string_view>>>& messages) {
    std::string out(1, '\1');
    for (const auto& [flags, frames] : messages) appendHistoryExchangeMessage(out, flags, frames);
    return out;
  };
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"server_all", server({{fuzz::kHistoryExchangeTake, {topic, all}}, {fuzz::kHistoryExchangeTake, {"x"}}})},
      {"server_filtered_again", server({{0, {topic, some}}, {fuzz::kHistoryExchangeTake, {topic, some}},
                                        {fuzz::kHistoryExchangeAdvance, {topic, all, "extra"}}})},
      {"server_crowd", server(crowd)},
      {"server_slow", server({{0, {topic, all}}, {fuzz::kHistoryExchangeAdvance, {"x"}},
                              {fuzz::kHistoryExchangeAdvance | fuzz::kHistoryExchangeTake, {"x"}}})},
      {"server_junk", server({{0, {topic, steps[0]}}, {0, {"livemon.history", "\x81\xa1v\x02"}}, {0, {"", "", "", ""}}})},
      {"reader_full", reader({{0, {"train.loss", steps[0]}}, {0, {"train.loss", steps[1]}},
                              {fuzz::kHistoryExchangeLive, {"train.loss", steps[2]}}, {0, {topic, endPayload}}})},
      {"reader_busy", reader({{fuzz::kHistoryExchangeLive, {"train.loss", steps[0]}}, {0, {topic, busyPayload}}})},
      {"reader_cut", reader({{0, {"train.loss", steps[0]}}, {fuzz::kHistoryExchangeWait | 0xf0, {"train.loss", steps[1]}}})},
      {"reader_bad_end", reader({{0, {"train.loss", steps[0]}}, {0, {topic, endPayload.substr(0, 9)}}, {0, {topic}}})},
      {"reader_overflow", reader({{fuzz::kHistoryExchangeLive, {"train.loss", bulkX}},
                                  {fuzz::kHistoryExchangeLive, {"train.loss", bulkY}},
                                  {0, {"train.loss", steps[0]}}})},
  };
  for (const auto& [name, bytes] : seeds) writeFile(dir / name, bytes);
}

// curve_certificate: certificates as livemonctl keygen writes them, czmq's layout with CRLF and
// single quotes, and near misses.
void writeCurveCertificateSeeds(const fs::path& dir) {
  const CurveKeyPair keys = generateCurveKeyPair();
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"public", curveCertificateText(keys, false)},
      {"secret", curveCertificateText(keys, true)},
      {"czmq_crlf", "#   ZeroMQ CURVE Public Certificate\r\nmetadata\r\n    name = 'x'\r\ncurve\r\n    public-key = '" +
                        keys.publicKey + "'\r\n"},
      {"unquoted", "public-key = " + keys.publicKey + "\n"},
      {"short_key", "public-key = \"" + keys.publicKey.substr(5) + "\"\n"},
      {"twice", "public-key = \"" + keys.publicKey + "\"\npublic-key = \"" + keys.publicKey + "\"\n"},
      {"no_public", "curve\n    secret-key = \"" + keys.secretKey + "\"\n"},
  };
  for (const auto& [name, bytes] : seeds) writeFile(dir / name, bytes);
}

// relay_capture: the window (length 4, budget 4 KiB), then what a relay is sent: a publisher's
// events, heartbeat and goodbye, subscriptions and their cancellations, a watcher's forged
// two-frame message, a third frame, and the same asking for decoding and for small limits.
void writeRelayCaptureSeeds(const fs::path& dir) {
  const SourceInfo trainer = source("train", 100, 0);
  const std::string events = encodeEventsPayload(
      trainer, 3, "step", {event("step", 0ms, {{"x", 1.0}}, int64_t{1}), event("step", 1ms, {{"x", 2.0}})});
  const std::string heartbeat = encodeHeartbeatPayload(MessageKind::Heartbeat, trainer, 1, counters(4));
  const std::string goodbye = encodeHeartbeatPayload(MessageKind::Goodbye, trainer, 2, counters(5));
  const std::string hb(kHeartbeatTopic);
  // The control byte: frames - 1, and the flags.
  auto message = [](std::string& out, uint8_t flags, const std::vector<std::string_view>& frames) {
    out += static_cast<char>(((frames.size() - 1) & 3) | flags);
    for (std::string_view frame : frames) {
      livemon::fuzz::appendU16(out, frame.size());
      out.append(frame);
    }
  };
  std::vector<std::pair<std::string, std::string>> seeds;
  for (uint8_t flags : {uint8_t{0}, uint8_t{0x04}, uint8_t{0x0c}}) {
    const std::string suffix = flags == 0 ? "" : flags == 0x04 ? "_decoded" : "_small";
    std::string publisher = "\3";
    livemon::fuzz::appendU16(publisher, 4096);
    std::string watcher = publisher;
    message(publisher, flags, {"step", events});
    message(publisher, flags, {hb, heartbeat});
    message(publisher, flags, {hb, goodbye});
    seeds.emplace_back("publisher" + suffix, publisher);
    message(watcher, flags, {std::string_view("\1step", 5)});
    message(watcher, flags, {std::string_view("\0step", 5)});
    message(watcher, flags, {std::string_view("\1", 1)});
    message(watcher, flags, {"step", events});
    message(watcher, flags, {"step", events, "extra"});
    message(watcher, flags, {""});
    seeds.emplace_back("watcher" + suffix, watcher);
  }
  for (const auto& [name, bytes] : seeds) writeFile(dir / name, bytes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: livemon_fuzz_seeds DIR\n";
    return 2;
  }
  try {
    const fs::path root = argv[1];
    for (const char* target : {"wire_decoder", "subscriber", "recording", "time_bound", "alert_rule", "history_protocol",
                               "history_exchange", "curve_certificate", "relay_capture", "view_decoder"}) {
      fs::remove_all(root / target);
      fs::create_directories(root / target);
    }
    writeWireDecoderSeeds(root / "wire_decoder");
    writeWireDecoderSeeds(root / "view_decoder");  // the same inputs, read by the view
    writeSubscriberSeeds(root / "subscriber");
    writeRecordingSeeds(root / "recording", root);
    writeTimeBoundSeeds(root / "time_bound");
    writeAlertRuleSeeds(root / "alert_rule");
    writeHistorySeeds(root / "history_protocol");
    writeHistoryExchangeSeeds(root / "history_exchange");
    writeCurveCertificateSeeds(root / "curve_certificate");
    writeRelayCaptureSeeds(root / "relay_capture");
  } catch (const std::exception& error) {
    std::cerr << "livemon_fuzz_seeds: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
