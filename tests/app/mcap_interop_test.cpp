// A livemon recording read by the official MCAP reader (@mcap/core, run with node): channels,
// message counts, time range and sources must match `livemonctl info --json`, every payload must
// decode with MessagePack, and every CRC must check out. test.sh installs the npm packages.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <filesystem>
#include <fstream>

#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>

#include "test_paths.h"
#include "test_support.h"

using livemon::test_paths::livemonctlPath;

namespace livemon::livemonctl {
namespace {

using namespace transport;

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::ChildProcess;

// Three sources, six event names, every value type, single events and batches, spread over many
// chunks.
void writeRecording(const std::string& path) {
  RecordingWriterOptions options;
  options.chunkBytes = 8 * 1024;
  RecordingWriter writer(path, options);
  const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'763'830'800));
  std::vector<std::shared_ptr<const SourceInfo>> sources;
  for (int s = 0; s < 3; ++s) {
    SourceInfo info{"run-" + std::to_string(s), "host-" + std::to_string(s % 2), 1000 + s,
                    s == 2 ? std::optional<int64_t>() : std::optional<int64_t>(s),
                    0xFEDCBA9876543210ULL - static_cast<uint64_t>(s), t0 - 1h, {}, {}};
    sources.push_back(std::make_shared<const SourceInfo>(info));
  }
  const char* names[] = {"livemon.Stat", "torch.monitor.Stat", "eval", "train.step"};
  for (int i = 0; i < 3000; ++i) {
    ReceivedEvent event;
    event.source = sources[static_cast<std::size_t>(i % 3)];
    event.sequence = static_cast<uint64_t>(i / 3);
    event.event.name = names[i % 4];
    event.event.timestamp = t0 + std::chrono::milliseconds(10 * i);
    event.event.data = {{"loss.mean", 1.0 / (i + 1)}, {"step", int64_t{i}}, {"ok", i % 2 == 0},
                        {"phase", std::string(i % 5 ? "train" : "Δ eval")}};
    event.receivedAt = event.event.timestamp + 2ms;
    recordEvent(writer, event);
  }
  // Messages as a recorder receives them: batches of 1 to 9 events of one name from one source
  // (docs/recording-format.md, version 2), some with steps.
  uint64_t batchSequence[3] = {0, 0, 0};
  for (int b = 0; b < 300; ++b) {
    const auto s = static_cast<std::size_t>(b % 3);
    std::vector<Event> batch;
    for (int e = 0; e <= b % 9; ++e) {
      Event event;
      event.name = "train.batch";
      event.timestamp = t0 + std::chrono::milliseconds(31'000 + 10 * b + e);
      event.data = {{"loss", 1.0 / (b + e + 1)}, {"i", int64_t{e}}};
      if (b % 2 == 0) event.step = int64_t{b * 10 + e};
      batch.push_back(std::move(event));
    }
    const std::string payload = encodeEventsPayload(*sources[s], batchSequence[s], "train.batch", batch);
    batchSequence[s] += batch.size();
    const auto receivedAt = static_cast<uint64_t>(toWireTime(batch.back().timestamp + 2ms));
    writer.write("train.batch", receivedAt, static_cast<uint64_t>(toWireTime(batch.front().timestamp)), payload);
  }
  // Records so repetitive that the writer pads their chunks with a zstd skippable frame, to stay
  // within the compression ratio readers accept.
  for (int i = 0; i < 3; ++i) {
    ReceivedEvent event;
    event.source = sources[0];
    event.sequence = static_cast<uint64_t>(i);
    event.event.name = "blob";
    event.event.timestamp = t0 + std::chrono::milliseconds(30'000 + i);
    for (int field = 0; field < 60; ++field) event.event.data["text-" + std::to_string(field)] = std::string(60'000, 'z');
    event.receivedAt = event.event.timestamp + 2ms;
    recordEvent(writer, event);
  }
}

TEST(McapInterop, OfficialReaderAgreesWithLivemonctlInfo) {
  const fs::path npmDir = LIVEMON_NPM_DIR;
  if (!fs::exists(npmDir / "node_modules" / "@mcap" / "core")) {
    FAIL() << "@mcap/core is not installed in " << npmDir
           << "; ./test.sh installs it (npm install --prefix " << npmDir << " with tests/interop/package.json)";
  }
  // ES modules resolve packages from the script's own folder, so the script runs from there.
  const fs::path script = npmDir / "mcap_interop.mjs";
  fs::copy_file(fs::path(livemon::test_paths::sourceDir()) / "tests" / "interop" / "mcap_interop.mjs", script,
                fs::copy_options::overwrite_existing);

  test::TempDir dir;
  const std::string recording = (dir.path() / "interop.mcap").string();
  writeRecording(recording);

  ChildProcess info({livemonctlPath(), "info", "--json", recording});
  ASSERT_EQ(info.exitCode(std::chrono::seconds(60)), 0) << info.err();
  const std::string infoPath = (dir.path() / "info.json").string();
  std::ofstream(infoPath) << info.out();

  ChildProcess node({LIVEMON_NODE, script.string(), recording, infoPath});
  EXPECT_EQ(node.exitCode(std::chrono::seconds(60)), 0) << node.err() << node.out();
  EXPECT_NE(node.out().find("matching livemonctl info"), std::string::npos) << node.out();
  EXPECT_NE(node.out().find("(266 of them batches)"), std::string::npos) << node.out();
}

}  // namespace
}  // namespace livemon::livemonctl
