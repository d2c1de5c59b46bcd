#include <livemonctl/watch.h>

#include <ostream>

#include <livemon/analysis_feed.h>
#include <livemon/transport/subscriber.h>
#include <livemonctl/command.h>
#include <livemonctl/event_format.h>
#include <livemonctl/text_format.h>

namespace livemon::livemonctl {

namespace {

constexpr std::string_view kCommand = "watch";

}  // namespace

std::string formatAlertText(const Alert& alert) {
  return localTimeOfDay(alert.time) + " alert " + printableText(describe(alert.source)) + ": " +
         printableText(alert.message) + " (rule " + quotedPrintableText(alert.rule) + ")";
}

std::string formatAlertJson(const Alert& alert) {
  std::string json = "{\"time\":\"" + isoUtc(alert.time) + "\",\"ts\":" + std::to_string(transport::toWireTime(alert.time)) +
                     ",\"alert\":\"" + std::string(alertRuleKindName(alert.kind)) + "\",\"rule\":" + jsonString(alert.rule);
  if (!alert.key.empty()) json += ",\"key\":" + jsonString(alert.key);
  json += ",\"value\":" + jsonDouble(alert.value) + ",\"message\":" + jsonString(alert.message);
  const AlertSource& source = alert.source;
  json += ",\"source\":{\"run\":" + jsonString(source.run) + ",\"host\":" + jsonString(source.host) +
          ",\"pid\":" + std::to_string(source.pid);
  if (source.rank) json += ",\"rank\":" + std::to_string(*source.rank);
  json += ",\"id\":\"" + hex16(source.instanceId) + "\"}}";
  return json;
}

int runWatch(const WatchOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  std::vector<AlertRule> rules;
  for (const std::string& text : options.rules.empty() ? kDefaultWatchRules : options.rules) {
    AlertRuleError error;
    std::optional<AlertRule> rule = parseAlertRule(text, &error);
    if (!rule) {
      commandMessage(err, kCommand) << "bad " << describeAlertRuleError(text, error) << std::endl;
      return kUsageExitCode;
    }
    rules.push_back(std::move(*rule));
  }

  return runCommand(kCommand, err, [&] {
    using namespace transport;
    Clock& clock = options.clock != nullptr ? *options.clock : systemClock();
    SubscriberOptions subscriberOptions;
    subscriberOptions.connect = options.endpoints;
    subscriberOptions.clock = &clock;
    subscriberOptions.curve = options.curve;
    Subscriber subscriber(subscriberOptions);
    QuietEndpointNotice quietNotice(kCommand, clock, options.quietNotice);
    AlertEngineOptions engineOptions;
    engineOptions.clock = &clock;
    AlertEngine engine(std::move(rules), engineOptions);

    commandMessage(err, kCommand) << "watching";
    for (const std::string& endpoint : options.endpoints) err << ' ' << endpoint;
    err << " for";
    for (const AlertRule& rule : engine.rules()) err << ' ' << quotedPrintableText(rule.text);
    err << std::endl;

    AnalysisFeed feed(&engine);
    const SubscriberCallbacks callbacks = feed.callbacks();

    uint64_t printed = 0;
    AlertEngineStats told;
    int code = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      subscriber.poll(std::chrono::milliseconds(200), callbacks);
      // Heartbeats reach only the subscriber's source table: silence and the publishers' own
      // drop counts are read from there.
      feed.sources(subscriber.sources());
      for (const FedAlert& fed : feed.takeAlerts()) {
        out << (options.json ? formatAlertJson(fed.alert) : formatAlertText(fed.alert)) << '\n';
        ++printed;
        if (options.exitOnAlert) {
          code = kAlertExitCode;
          break;
        }
      }
      out.flush();

      const AlertEngineStats now = engine.stats();
      if (now.statesForgotten != told.statesForgotten || now.sourcesForgotten != told.sourcesForgotten) {
        commandMessage(err, kCommand) << "notice: forgot " << now.statesForgotten - told.statesForgotten
                                      << " value state(s) and " << now.sourcesForgotten - told.sourcesForgotten
                                      << " source(s) beyond the limits; a forgotten one may alert again" << std::endl;
      }
      told = now;
      quietNotice.check(subscriber, err);
      if (code != 0) break;
    }

    commandMessage(err, kCommand) << printed << " alert(s)" << (code == kAlertExitCode ? ", stopped at the first" : "")
                                  << "; " << formatReceiveSummary(subscriber.stats()) << std::endl;
    return code;
  });
}

}  // namespace livemon::livemonctl
