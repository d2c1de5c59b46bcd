// A real Prometheus server scrapes `livemonctl demo --metrics-port` and answers a query for the
// demo's loss through its HTTP API: what a cluster's Prometheus/Grafana would see.
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "http_get.h"
#include "test_support.h"

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

// The number in the first `"value":[<time>,"<number>"]` of a query answer.
std::optional<double> firstValue(const std::string& json) {
  const std::size_t value = json.find("\"value\":[");
  if (value == std::string::npos) return std::nullopt;
  const std::size_t comma = json.find(",\"", value);
  if (comma == std::string::npos) return std::nullopt;
  const std::size_t end = json.find('"', comma + 2);
  if (end == std::string::npos) return std::nullopt;
  return std::strtod(json.substr(comma + 2, end - comma - 2).c_str(), nullptr);
}

TEST(PrometheusTest, ReadsTheDemosLossBackThroughPrometheusQueryApi) {
  const std::string prometheus = LIVEMON_PROMETHEUS;
  if (prometheus.empty()) {
    GTEST_SKIP() << "the prometheus binary was not found when this was configured (./test.sh installs Debian's "
                    "prometheus package); the Prometheus integration test did not run";
  }
  test::TempDir dir;
  const uint16_t metricsPort = test::freeTcpPort();
  test::ChildProcess demo({LIVEMONCTL_PATH, "demo", "--endpoint", "tcp://127.0.0.1:*", "--run", "prom-demo",
                           "--window", "0.2", "--steps-per-second", "50", "--metrics-port",
                           std::to_string(metricsPort)});
  ASSERT_TRUE(demo.readStdoutUntil([](const std::string& out) { return out.find("/metrics") != std::string::npos; }))
      << demo.out() << demo.err();

  const std::filesystem::path config = dir.path() / "prometheus.yml";
  std::ofstream(config) << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                        << "scrape_configs:\n  - job_name: livemon\n    static_configs:\n"
                        << "      - targets: ['127.0.0.1:" << metricsPort << "']\n";
  const uint16_t prometheusPort = test::freeTcpPort();
  test::ChildProcess server({prometheus, "--config.file=" + config.string(),
                             "--storage.tsdb.path=" + (dir.path() / "data").string(),
                             "--web.listen-address=127.0.0.1:" + std::to_string(prometheusPort),
                             "--log.level=warn"});

  const std::string query =
      "/api/v1/query?query=" + urlEncode(R"(livemon_stat{stat="train.loss",aggregation="mean",run="prom-demo"})");
  std::string answer;
  std::optional<double> loss;
  // Polls for the server to start, scrape (every second) and answer; bounded, not a fixed wait.
  const auto end = std::chrono::steady_clock::now() + 90s;
  while (!loss && std::chrono::steady_clock::now() < end) {
    if (const auto response = test::httpGet(prometheusPort, query); response && response->status == 200) {
      answer = response->body;
      if (answer.find("\"result\":[{") != std::string::npos) loss = firstValue(answer);
    }
    if (!loss) std::this_thread::sleep_for(200ms);
  }
  ASSERT_TRUE(loss) << "Prometheus answered: " << answer << "\nits log: " << server.err();
  EXPECT_NE(answer.find(R"("stat":"train.loss")"), std::string::npos) << answer;
  EXPECT_NE(answer.find(R"("job":"livemon")"), std::string::npos) << answer;
  EXPECT_GT(*loss, 0.0) << answer;  // the demo's loss starts near 2.5 and stays positive
  EXPECT_LT(*loss, 100.0) << answer;

  server.signal(SIGTERM);
  EXPECT_TRUE(server.wait());
  demo.signal(SIGINT);
  const std::optional<int> status = demo.wait();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << demo.err();
}

// The cluster's way: ranks publish into a relay, and Prometheus scrapes the relay, which serves
// every rank's Stats (labelled by rank) and its own counters.
TEST(PrometheusTest, ReadsEveryRanksLossBackThroughARelay) {
  const std::string prometheus = LIVEMON_PROMETHEUS;
  if (prometheus.empty()) {
    GTEST_SKIP() << "the prometheus binary was not found when this was configured (./test.sh installs Debian's "
                    "prometheus package); the Prometheus integration test did not run";
  }
  test::TempDir dir;
  const uint16_t metricsPort = test::freeTcpPort();
  const std::string listen = "tcp://127.0.0.1:" + std::to_string(test::freeTcpPort());
  test::ChildProcess relay({LIVEMONCTL_PATH, "relay", "--listen", listen, "--serve", "tcp://127.0.0.1:*",
                            "--metrics-port", std::to_string(metricsPort)});
  ASSERT_TRUE(relay.readStdoutUntil([](const std::string& out) { return out.find("/metrics") != std::string::npos; }))
      << relay.out() << relay.err();
  test::ChildProcess demo({LIVEMONCTL_PATH, "demo", "--ranks", "2", "--connect", listen, "--run", "prom-relay",
                           "--window", "0.2", "--steps-per-second", "50"});

  const std::filesystem::path config = dir.path() / "prometheus.yml";
  std::ofstream(config) << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                        << "scrape_configs:\n  - job_name: relay\n    static_configs:\n"
                        << "      - targets: ['127.0.0.1:" << metricsPort << "']\n";
  const uint16_t prometheusPort = test::freeTcpPort();
  test::ChildProcess server({prometheus, "--config.file=" + config.string(),
                             "--storage.tsdb.path=" + (dir.path() / "data").string(),
                             "--web.listen-address=127.0.0.1:" + std::to_string(prometheusPort),
                             "--log.level=warn"});

  const auto ask = [&](const std::string& promql, std::string& answer) {
    std::optional<double> value;
    const auto end = std::chrono::steady_clock::now() + 90s;  // bounded polling, not a fixed wait
    while (!value && std::chrono::steady_clock::now() < end) {
      if (const auto response = test::httpGet(prometheusPort, "/api/v1/query?query=" + urlEncode(promql));
          response && response->status == 200) {
        answer = response->body;
        if (answer.find("\"result\":[{") != std::string::npos) value = firstValue(answer);
      }
      if (!value) std::this_thread::sleep_for(200ms);
    }
    return value;
  };
  std::string answer;
  for (const char* rank : {"0", "1"}) {
    const std::optional<double> loss =
        ask(std::string(R"(livemon_stat{stat="train.loss",aggregation="mean",run="prom-relay",rank=")") + rank + "\"}",
            answer);
    ASSERT_TRUE(loss) << "rank " << rank << ": Prometheus answered: " << answer << "\nits log: " << server.err();
    EXPECT_GT(*loss, 0.0) << answer;
    EXPECT_NE(answer.find(R"("job":"relay")"), std::string::npos) << answer;
  }
  const std::optional<double> forwarded = ask("livemon_relay_down_messages_total > 0", answer);
  ASSERT_TRUE(forwarded) << "the relay's own counter: " << answer;
  EXPECT_GT(*forwarded, 0.0);

  server.signal(SIGTERM);
  EXPECT_TRUE(server.wait());
  demo.signal(SIGINT);
  EXPECT_TRUE(demo.wait());
  relay.signal(SIGTERM);
  const std::optional<int> status = relay.wait();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << relay.err();
}

}  // namespace
}  // namespace livemon::transport
