#include <livemonctl/ranks.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <ostream>

#include <CLI/CLI.hpp>

#include <livemon/detail/json_writer.h>
#include <livemon/analysis_feed.h>
#include <livemon/transport/subscriber.h>
#include <livemonctl/command.h>
#include <livemonctl/event_format.h>
#include <livemonctl/text_format.h>

namespace livemon::livemonctl {

namespace {

constexpr std::string_view kCommand = "ranks";
// The longest wait in one poll: how late a stop or a window can be noticed.
constexpr std::chrono::milliseconds kMaxPoll{200};
// Windows with ranked sources heard but no value of the key, before saying so once.
constexpr int kWindowsBeforeKeyNotice = 3;
// Moves the cursor home and clears the screen, for a table redrawn in place.
constexpr std::string_view kClearScreen = "\033[H\033[2J";

std::string scoreText(double score) {
  if (std::isnan(score)) return "-";
  if (std::isinf(score)) return "inf";
  return fixedDecimals(score, 2);
}

std::string valueText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string flagText(const RankScore& score, uint32_t windows) {
  if (score.flagged) return "FLAGGED";
  if (score.stale) return "stale";
  if (score.below > 0) return "low " + std::to_string(score.below) + "/" + std::to_string(windows);
  return "";
}

}  // namespace

std::string formatRankWindowJson(const RankWindow& window, const RankScorerOptions& scoring) {
  detail::JsonWriter json;
  json.beginObject().key("time").string(isoUtc(window.time)).key("ts").integer(transport::toWireTime(window.time));
  json.key("run").string(window.run).key("stat").string(scoring.key).key("median").number(window.median);
  json.key("threshold").number(scoring.threshold).key("windows").integer(scoring.windows).key("ranks").beginArray();
  for (const RankScore& score : window.ranks) {
    json.beginObject().key("rank").integer(score.rank).key("value").number(score.value).key("score").number(score.score);
    json.key("flagged").boolean(score.flagged).key("below").integer(score.below).key("stale").boolean(score.stale);
    json.key("host").string(score.host).key("pid").integer(score.pid).key("id").string(hex16(score.instanceId)).endObject();
  }
  json.endArray().key("flagged").beginArray();
  for (const int64_t rank : window.flagged) json.integer(rank);
  json.endArray().endObject();
  return json.take();
}

std::string formatRankWindowText(const RankWindow& window, const RankScorerOptions& scoring, std::size_t rows) {
  std::string text = localTimeOfDay(window.time) + " run " + quotedPrintableText(window.run) + ": " +
                     std::to_string(window.ranks.size()) + " rank(s), " + std::to_string(window.scored) + " scored; " +
                     printableText(scoring.key) + " median " + valueText(window.median) + "; flagged (score < " +
                     shortestDouble(scoring.threshold) + " for " + std::to_string(scoring.windows) + " windows): ";
  if (window.flagged.empty()) text += "none";
  for (std::size_t i = 0; i < window.flagged.size(); ++i) {
    if (i > 0) text += ' ';
    text += std::to_string(window.flagged[i]);
  }
  text += '\n';
  char line[256];
  std::snprintf(line, sizeof line, "%8s %7s %12s %-8s %8s  %s\n", "RANK", "SCORE", "VALUE", "FLAG", "PID", "HOST");
  text += line;
  const std::size_t shown = rows == 0 ? window.ranks.size() : std::min(rows, window.ranks.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const RankScore& score = window.ranks[i];
    std::snprintf(line, sizeof line, "%8lld %7s %12s %-8s %8lld  ", static_cast<long long>(score.rank),
                  scoreText(score.score).c_str(), valueText(score.value).c_str(), flagText(score, scoring.windows).c_str(),
                  static_cast<long long>(score.pid));
    text += line + printableText(score.host) + '\n';
  }
  if (shown < window.ranks.size()) text += "     ... " + std::to_string(window.ranks.size() - shown) + " more\n";
  return text;
}

int runRanks(const RanksOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  return runCommand(kCommand, err, [&] {
    using namespace transport;
    if (options.window < std::chrono::milliseconds(1)) throw std::invalid_argument("window must be at least 1 ms");
    if (options.duration.count() < 0) throw std::invalid_argument("duration must not be negative");
    Clock& clock = options.clock != nullptr ? *options.clock : systemClock();
    RankScorerOptions scoring;
    scoring.key = options.stat;
    scoring.direction = options.direction;
    scoring.threshold = options.threshold;
    scoring.windows = options.windows;
    // A rank is stale after three windows without a value (at least the subscriber's default).
    scoring.staleAfter = std::max<std::chrono::milliseconds>(3 * options.window, std::chrono::milliseconds(3000));
    scoring.forgetAfter = 10 * scoring.staleAfter;
    scoring.clock = &clock;
    RankScorer scorer(scoring);

    SubscriberOptions subscriberOptions;
    subscriberOptions.connect = options.endpoints;
    subscriberOptions.clock = &clock;
    subscriberOptions.curve = options.curve;
    Subscriber subscriber(subscriberOptions);
    QuietEndpointNotice quietNotice(kCommand, clock, options.quietNotice);

    commandMessage(err, kCommand) << "scoring the ranks of each run at";
    for (const std::string& endpoint : options.endpoints) err << ' ' << endpoint;
    err << " by " << quotedPrintableText(options.stat) << " every " << shortestDouble(static_cast<double>(options.window.count()) / 1000.0)
        << " s" << std::endl;

    AnalysisFeed feed(nullptr, &scorer);
    const SubscriberCallbacks callbacks = feed.callbacks();

    const auto start = clock.now();
    auto nextWindow = start + options.window;
    uint64_t printed = 0;
    int windowsWithoutKey = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const auto now = clock.now();
      if (options.duration.count() > 0 && now - start >= options.duration) break;
      if (now < nextWindow) {
        const auto wait = std::chrono::ceil<std::chrono::milliseconds>(nextWindow - now);
        subscriber.poll(std::clamp(wait, std::chrono::milliseconds(1), kMaxPoll), callbacks);
        quietNotice.check(subscriber, err);
        continue;
      }
      // A loop that fell behind (a suspended process) starts afresh rather than catching up.
      nextWindow = std::max(nextWindow + options.window, now);
      const std::vector<RankWindow> windows = scorer.evaluate();
      if (!options.json && options.redraw) out << kClearScreen;
      for (const RankWindow& window : windows) {
        out << (options.json ? formatRankWindowJson(window, scoring) + '\n' : formatRankWindowText(window, scoring, options.rows));
        ++printed;
      }
      if (!options.json && !options.redraw && !windows.empty()) out << '\n';
      out.flush();

      if (windows.empty() && windowsWithoutKey < kWindowsBeforeKeyNotice) {
        const std::vector<SourceStatus> sources = subscriber.sources();
        const bool ranked = std::any_of(sources.begin(), sources.end(), [](const SourceStatus& status) {
          return status.source && status.source->rank && status.state != SourceState::Gone;
        });
        if (ranked && ++windowsWithoutKey == kWindowsBeforeKeyNotice) {
          commandMessage(err, kCommand) << "notice: ranked sources are sending, but none sent "
                                        << quotedPrintableText(options.stat)
                                        << " (a Stat's key is <stat>.<aggregation>, as in train.compute_time_ms.mean)"
                                        << std::endl;
        }
      }
    }

    const RankScorerStats stats = scorer.stats();
    commandMessage(err, kCommand) << printed << " run window(s) printed; " << stats.values << " value(s) from "
                                  << stats.ranks << " rank(s) of " << stats.runs << " run(s)";
    if (stats.refused > 0) err << ", " << stats.refused << " refused beyond the limits";
    err << "; " << formatReceiveSummary(subscriber.stats()) << std::endl;
    return 0;
  });
}

Command addRanksCommand(CLI::App& app) {
  // What the options parse into, kept alive by the returned command.
  struct Parsed {
    RanksOptions ranks;
    double window = 1.0;
    double duration = 0.0;
    bool higherIsFaster = false;
  };
  const auto parsed = std::make_shared<Parsed>();
  RanksOptions& ranks = parsed->ranks;
  CLI::App* command = app.add_subcommand(
      "ranks", "Score the ranks of each run against their median every window and flag stragglers, like top");
  command->add_option("endpoints", ranks.endpoints, "Endpoints to connect to (a relay's --serve, or every rank's)")
      ->capture_default_str();
  command->add_option("--stat", ranks.stat,
                      "The value key to score, <stat>.<aggregation> (default train.compute_time_ms.mean: "
                      "in synchronous training every rank's step time is the same, its compute time is not)")
      ->option_text("KEY")
      ->check(CLI::Validator([](std::string& text) { return text.empty() ? std::string("must not be empty") : std::string(); },
                             "KEY", "value key"))
      ->capture_default_str();
  command->add_flag("--higher-is-faster", parsed->higherIsFaster,
                    "KEY is a rate (samples/s): score = value / median instead of median / value");
  command->add_option("--threshold", ranks.threshold, "Flag a rank whose score stays below X (0.8) ...")
      ->option_text("X")
      ->check(positiveFactor())
      ->capture_default_str();
  command->add_option("--windows", ranks.windows, "... for K windows in a row (3)")
      ->option_text("K")
      ->check(CLI::Range(uint32_t{1}, uint32_t{1'000'000}))
      ->capture_default_str();
  command->add_option("--window", parsed->window, "Seconds between scorings (1)")
      ->option_text("S")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  command->add_option("--duration", parsed->duration, "Stop after this many seconds (0: run until Ctrl-C)")
      ->option_text("S")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  command->add_option("--rows", ranks.rows, "Show at most N ranks per run, worst first (0: all)")
      ->option_text("N")
      ->capture_default_str();
  command->add_flag("--json", ranks.json, "Print one JSON object per run and window");
  addClientCurveOptions(*command, ranks.curve);

  return {command, [parsed](const CommandContext& context) {
            RanksOptions options = parsed->ranks;
            options.window = secondsToMs(parsed->window);
            options.duration = secondsToMs(parsed->duration);
            options.direction =
                parsed->higherIsFaster ? RankScoreDirection::HigherIsFaster : RankScoreDirection::LowerIsFaster;
            options.redraw = context.outIsTerminal;
            return runRanks(options, context.stop, context.out, context.err);
          }};
}

}  // namespace livemon::livemonctl
