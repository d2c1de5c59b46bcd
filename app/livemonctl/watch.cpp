#include <livemonctl/watch.h>

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

constexpr std::string_view kCommand = "watch";

}  // namespace

std::string formatAlertText(const Alert& alert) {
  return localTimeOfDay(alert.time) + " alert " + printableText(alertSourceName(alert.source)) + ": " +
         printableText(alert.message) + " (rule " + quotedPrintableText(alert.rule) + ")";
}

std::string formatAlertJson(const Alert& alert) {
  detail::JsonWriter json;
  json.beginObject().key("time").string(isoUtc(alert.time)).key("ts").integer(transport::toWireTime(alert.time));
  json.key("alert").string(alertRuleKindName(alert.kind)).key("rule").string(alert.rule);
  if (!alert.key.empty()) json.key("key").string(alert.key);
  json.key("value").number(alert.value).key("message").string(alert.message);
  const SourceInfo& source = alert.source;
  json.key("source").beginObject().key("run").string(source.run).key("host").string(source.host).key("pid").integer(source.pid);
  if (source.rank) json.key("rank").integer(*source.rank);
  json.key("id").string(hex16(source.instanceId)).endObject().endObject();
  return json.take();
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

Command addWatchCommand(CLI::App& app) {
  // Checks a --rule before anything runs, so a bad one is a usage error naming the rule.
  static const CLI::Validator alertRule(
      [](std::string& text) {
        AlertRuleError error;
        return parseAlertRule(text, &error) ? std::string() : describeAlertRuleError(text, error);
      },
      "RULE", "alert rule");
  const auto options = std::make_shared<WatchOptions>();
  CLI::App* command = app.add_subcommand(
      "watch", "Apply alert rules to what publishers send; print each alert (exit status 3 with --exit-on-alert)");
  command->add_option("endpoints", options->endpoints, "Endpoints to connect to")->capture_default_str();
  command
      ->add_option("--rule", options->rules,
                   "An alert rule (repeatable): nan | silent [DURATION] | loss | KEY > X [for N] (also >=, <, <=). "
                   "Default: nan, silent, loss")
      ->option_text("RULE")
      ->allow_extra_args(false)
      ->check(alertRule);
  command->add_flag("--exit-on-alert", options->exitOnAlert, "Exit with status 3 at the first alert");
  command->add_flag("--json", options->json, "Print one JSON object per alert and line");
  addClientCurveOptions(*command, options->curve);

  return {command, [options](const CommandContext& context) {
            return runWatch(*options, context.stop, context.out, context.err);
          }};
}

}  // namespace livemon::livemonctl
