#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/subscriber.h>

// Received events and a small recording of them, for the tests of the recorded-event encoding
// (tests/transport) and of the commands that read recordings (tests/app).
namespace livemon::transport::test {

// 2025-11-22 17:00 UTC
inline constexpr auto kT0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'763'830'800));

// A publisher instance on node-1 whose instance id follows from `pid`, started an hour before kT0.
inline std::shared_ptr<const SourceInfo> source(std::string run, int64_t pid, std::optional<int64_t> rank = std::nullopt) {
  SourceInfo info;
  info.run = std::move(run);
  info.host = "node-1";
  info.pid = pid;
  info.rank = rank;
  info.instanceId = static_cast<uint64_t>(pid) * 7919;
  info.startTime = kT0 - std::chrono::hours(1);
  return std::make_shared<const SourceInfo>(std::move(info));
}

// An event stamped `at` after kT0 and received 3 ms later.
inline ReceivedEvent received(std::shared_ptr<const SourceInfo> from, uint64_t sequence, std::string name,
                              std::chrono::milliseconds at, std::unordered_map<std::string, DataValue> data) {
  ReceivedEvent event;
  event.event = Event{std::move(name), kT0 + at, std::move(data)};
  event.source = std::move(from);
  event.sequence = sequence;
  event.receivedAt = kT0 + at + std::chrono::milliseconds(3);
  return event;
}

// Writes `path`: two sources, a trainer sending Stat windows each second (10 events) and an
// evaluator sending two evals, in receive order as a recorder writes them.
inline void writeSampleRecording(const std::string& path) {
  using namespace std::chrono_literals;
  RecordingWriter writer(path);
  const auto trainer = source("train", 100, 0);
  const auto evaluator = source("eval", 200);
  for (uint64_t i = 0; i < 10; ++i) {
    recordEvent(writer, received(trainer, i, "livemon.Stat", std::chrono::seconds(i),
                                 {{"loss.mean", 1.0 / static_cast<double>(i + 1)}, {"loss.count", 100.0}}));
    if (i == 4) recordEvent(writer, received(evaluator, 0, "eval", 4s, {{"accuracy", 0.5}, {"epoch", int64_t{1}}}));
  }
  recordEvent(writer, received(evaluator, 1, "eval", 9s,
                               {{"accuracy", 0.75}, {"epoch", int64_t{2}}, {"note", std::string("best, \"so far\"")},
                                {"final", true}}));
}

// Every event in the recording at `path`, decoded with its source and sequence number, in file
// order; `problems` (when given) gets the reader's problems and the messages it could not decode.
inline std::vector<ReceivedEvent> readRecordedEvents(const std::string& path, std::vector<std::string>* problems = nullptr) {
  RecordingReader reader(path);
  RecordedEventDecoder decoder(path);
  std::vector<ReceivedEvent> events;
  std::vector<ReceivedEvent> batch;
  reader.forEachMessage([&](const RecordedMessage& message) {
    std::string error;
    if (!decoder.decode(message, batch, &error) && problems != nullptr) problems->push_back(error);
    for (ReceivedEvent& event : batch) events.push_back(std::move(event));
    return true;
  });
  for (const RecordingProblem& problem : reader.problems()) {
    if (problems != nullptr) problems->push_back(problem.what);
  }
  return events;
}

}  // namespace livemon::transport::test
