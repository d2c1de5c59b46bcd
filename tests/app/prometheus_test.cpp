// A real Prometheus server scrapes `livemonctl demo --metrics-port` and answers a query for the
// demo's loss through its HTTP API: what a cluster's Prometheus/Grafana would see.
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "http_get.h"
#include "json_lines.h"
#include "test_paths.h"
#include "test_support.h"

using livemon::test_paths::livemonctlPath;

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;

std::string urlEncode(const std::string& text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '_' || c == '-' || c == '.') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(hex[byte >> 4]);
      out.push_back(hex[byte & 15]);
    }
  }
  return out;
}

// The number of the first sample in a query answer,
// {"status":"success","data":{"resultType":"vector","result":[{"metric":{...},"value":[<time>,"<number>"]}]}};
// none while the result is empty.
std::optional<double> firstValue(const std::string& answer) {
  const test::Json json = test::parseJson(answer);
  const test::Json& result = json["data"]["result"];
  if (!result.is_array() || result.empty()) return std::nullopt;
  return std::stod(result[0]["value"][1].get<std::string>());
}

// A real Prometheus server on loopback, scraping one target every second, with its storage in a
// temporary directory; stopped (SIGTERM) at the end of the test.
class PrometheusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(LIVEMON_PROMETHEUS).empty()) {
      GTEST_SKIP() << "the prometheus binary was not found when this was configured (./test.sh installs Debian's "
                      "prometheus package); the Prometheus integration test did not run";
    }
  }
  void TearDown() override {
    if (!server_) return;
    server_->signal(SIGTERM);
    EXPECT_TRUE(server_->wait());
  }

  void scrape(const std::string& job, uint16_t targetPort) {
    const std::filesystem::path config = dir_.path() / "prometheus.yml";
    std::ofstream(config) << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                          << "scrape_configs:\n  - job_name: " << job << "\n    static_configs:\n"
                          << "      - targets: ['127.0.0.1:" << targetPort << "']\n";
    port_ = test::freeTcpPort();
    server_ = std::make_unique<test::ChildProcess>(std::vector<std::string>{
        LIVEMON_PROMETHEUS, "--config.file=" + config.string(), "--storage.tsdb.path=" + (dir_.path() / "data").string(),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"});
  }

  // The first value Prometheus answers `promql` with, polling while it starts and scrapes (every
  // second): bounded, not a fixed wait. `answer` keeps its last reply, for failure messages.
  std::optional<double> ask(const std::string& promql, std::string& answer) {
    const auto end = std::chrono::steady_clock::now() + 90s;
    while (std::chrono::steady_clock::now() < end) {
      if (const auto response = test::httpGet(port_, "/api/v1/query?query=" + urlEncode(promql));
          response && response->status == 200) {
        answer = response->body;
        if (const std::optional<double> value = firstValue(answer)) return value;
      }
      std::this_thread::sleep_for(200ms);
    }
    return std::nullopt;
  }

  std::string log() const { return server_ ? server_->err() : std::string(); }

 private:
  test::TempDir dir_;
  uint16_t port_ = 0;
  std::unique_ptr<test::ChildProcess> server_;
};

TEST_F(PrometheusTest, ReadsTheDemosLossBackThroughPrometheusQueryApi) {
  const uint16_t metricsPort = test::freeTcpPort();
  test::ChildProcess demo({livemonctlPath(), "demo", "--endpoint", "tcp://127.0.0.1:*", "--run", "prom-demo",
                           "--window", "0.2", "--steps-per-second", "50", "--metrics-port",
                           std::to_string(metricsPort)});
  ASSERT_TRUE(demo.readStdoutUntil([](const std::string& out) { return out.find("/metrics") != std::string::npos; }))
      << demo.out() << demo.err();
  scrape("livemon", metricsPort);

  std::string answer;
  const std::optional<double> loss = ask(R"(livemon_stat{stat="train.loss",aggregation="mean",run="prom-demo"})", answer);
  ASSERT_TRUE(loss) << "Prometheus answered: " << answer << "\nits log: " << log();
  EXPECT_NE(answer.find(R"("stat":"train.loss")"), std::string::npos) << answer;
  EXPECT_NE(answer.find(R"("job":"livemon")"), std::string::npos) << answer;
  EXPECT_GT(*loss, 0.0) << answer;  // the demo's loss starts near 2.5 and stays positive
  EXPECT_LT(*loss, 100.0) << answer;

  demo.signal(SIGINT);
  EXPECT_EQ(demo.exitCode(), 0) << demo.err();
}

// The cluster's way: ranks publish into a relay, and Prometheus scrapes the relay, which serves
// every rank's Stats (labelled by rank) and its own counters.
TEST_F(PrometheusTest, ReadsEveryRanksLossBackThroughARelay) {
  const uint16_t metricsPort = test::freeTcpPort();
  const std::string listen = "tcp://127.0.0.1:" + std::to_string(test::freeTcpPort());
  test::ChildProcess relay({livemonctlPath(), "relay", "--listen", listen, "--serve", "tcp://127.0.0.1:*",
                            "--metrics-port", std::to_string(metricsPort)});
  ASSERT_TRUE(relay.readStdoutUntil([](const std::string& out) { return out.find("/metrics") != std::string::npos; }))
      << relay.out() << relay.err();
  test::ChildProcess demo({livemonctlPath(), "demo", "--ranks", "2", "--connect", listen, "--run", "prom-relay",
                           "--window", "0.2", "--steps-per-second", "50"});
  scrape("relay", metricsPort);

  std::string answer;
  for (const char* rank : {"0", "1"}) {
    const std::optional<double> loss =
        ask(std::string(R"(livemon_stat{stat="train.loss",aggregation="mean",run="prom-relay",rank=")") + rank + "\"}",
            answer);
    ASSERT_TRUE(loss) << "rank " << rank << ": Prometheus answered: " << answer << "\nits log: " << log();
    EXPECT_GT(*loss, 0.0) << answer;
    EXPECT_NE(answer.find(R"("job":"relay")"), std::string::npos) << answer;
  }
  const std::optional<double> forwarded = ask("livemon_relay_down_messages_total > 0", answer);
  ASSERT_TRUE(forwarded) << "the relay's own counter: " << answer;
  EXPECT_GT(*forwarded, 0.0);
  // The relay's bounds are watched from Prometheus too: what it refused and dropped, none here.
  for (const char* counter : {"livemon_relay_refused_messages_total", "livemon_relay_queue_dropped_total",
                              "livemon_relay_publishers_refused_total", "livemon_relay_subscribers_cut_total"}) {
    const std::optional<double> value = ask(counter, answer);
    ASSERT_TRUE(value) << counter << ": " << answer;
    EXPECT_EQ(*value, 0.0) << counter;
  }

  demo.signal(SIGINT);
  EXPECT_EQ(demo.exitCode(), 0) << demo.err();
  relay.signal(SIGTERM);
  EXPECT_EQ(relay.exitCode(), 0) << relay.err();
}

}  // namespace
}  // namespace livemon::transport
