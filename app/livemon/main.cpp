// livemon: the desktop dashboard. Parses the command line and opens the main window.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QIcon>
#include <QStringList>

#include <livemon/transport/wire_format.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/main_window.h>

namespace {

constexpr int kUsageError = 2;

struct Parsed {
  livemon::ui::DashboardOptions options;
  bool exit = false;
  int exitCode = 0;
};

Parsed parseArguments(const QStringList& arguments) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Live charts of every Stat, and the event log, of the training jobs publishing on ENDPOINTs.\n"
                     "With no ENDPOINT: the endpoints of the last session, or %1.\n"
                     "A FILE.mcap argument (a livemon recording) is replayed on a timeline; alone, without endpoints.\n"
                     "A DIR argument opens every recording under DIR (subfolders too) as runs, shown whole and\n"
                     "overlaid, like tensorboard --logdir; recordings added to it later join them.")
          .arg(QString::fromUtf8(livemon::transport::kDefaultEndpoint.data())));
  const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Show this help."));
  const QCommandLineOption version({QStringLiteral("v"), QStringLiteral("version")}, QStringLiteral("Show the version."));
  const QCommandLineOption logCapacity(
      QStringLiteral("log-capacity"), QStringLiteral("Keep the newest N events in the event log, at most a quarter of them Stat windows (default 1000000)."),
      QStringLiteral("N"));
  const QCommandLineOption settings(QStringLiteral("settings"),
                                    QStringLiteral("Read and save settings in FILE instead of the user's."),
                                    QStringLiteral("FILE"));
  const QCommandLineOption baseline(QStringLiteral("baseline"),
                                    QStringLiteral("Show the recorded runs of FILE beside the others, to compare with "
                                                   "(repeatable)."),
                                    QStringLiteral("FILE"));
  const QCommandLineOption seek(QStringLiteral("seek"),
                                QStringLiteral("Start the replay S seconds into the recording (default: at its end)."),
                                QStringLiteral("S"));
  const QCommandLineOption play(QStringLiteral("play"), QStringLiteral("Start playing the replay at once."));
  const QCommandLineOption noHistory(
      QStringLiteral("no-history"),
      QStringLiteral("Show only what arrives from now on: do not fetch the run so far from the publishers' (or "
                     "relay's) history."));
  parser.addOption(help);
  parser.addOption(baseline);
  parser.addOption(seek);
  parser.addOption(play);
  parser.addOption(noHistory);
  parser.addOption(version);
  parser.addOption(logCapacity);
  const QCommandLineOption view(QStringLiteral("view"),
                                QStringLiteral("Show VIEW first: charts, ranges or ranks (default: as the last session ended)."),
                                QStringLiteral("VIEW"));
  parser.addOption(settings);
  parser.addOption(view);
  const QCommandLineOption curveServer(
      QStringLiteral("curve-server"),
      QStringLiteral("Encrypt and authenticate with CURVE: the publisher's or relay's NAME.key (default: "
                     "LIVEMON_CURVE_SERVER)."),
      QStringLiteral("FILE"));
  const QCommandLineOption curveClient(
      QStringLiteral("curve-client"),
      QStringLiteral("With --curve-server: this side's NAME.key_secret, its NAME.key in the server's allow list "
                     "(default: LIVEMON_CURVE_CLIENT)."),
      QStringLiteral("FILE"));
  parser.addOption(curveServer);
  parser.addOption(curveClient);
  parser.addPositionalArgument(QStringLiteral("ENDPOINT"),
                               QStringLiteral("A publisher to subscribe to, e.g. tcp://127.0.0.1:5555."),
                               QStringLiteral("[ENDPOINT...]"));
  parser.addPositionalArgument(QStringLiteral("FILE.mcap"), QStringLiteral("A recording to replay."),
                               QStringLiteral("[FILE.mcap]"));
  parser.addPositionalArgument(QStringLiteral("DIR"), QStringLiteral("A folder of recordings to open as runs."),
                               QStringLiteral("[DIR]"));

  // Without an application object (none exists yet) Qt cannot name the program.
  const QString helpText = parser.helpText().replace(QStringLiteral("<executable_name>"), QStringLiteral("livemon"));
  Parsed parsed;
  const auto usageError = [&](const QString& message) {
    std::fprintf(stderr, "livemon: %s\n\n%s", qUtf8Printable(message), qUtf8Printable(helpText));
    parsed.exit = true;
    parsed.exitCode = kUsageError;
    return parsed;
  };
  if (!parser.parse(arguments)) return usageError(parser.errorText());
  if (parser.isSet(help)) {
    std::fputs(qUtf8Printable(helpText), stdout);
    parsed.exit = true;
    return parsed;
  }
  if (parser.isSet(version)) {
    std::printf("livemon %s\n", LIVEMON_VERSION);
    parsed.exit = true;
    return parsed;
  }
  if (parser.isSet(logCapacity)) {
    bool ok = false;
    const qlonglong capacity = parser.value(logCapacity).toLongLong(&ok);
    if (!ok || capacity < 1 || capacity > 2'147'483'647) {
      return usageError(QStringLiteral("--log-capacity must be a whole number from 1 to 2147483647, not '%1'")
                            .arg(parser.value(logCapacity)));
    }
    parsed.options.logCapacity = static_cast<std::size_t>(capacity);
  }
  parsed.options.settingsFile = parser.value(settings);
  for (const auto& [option, target] : {std::pair{&curveServer, &parsed.options.curve.serverCertificate},
                                       std::pair{&curveClient, &parsed.options.curve.certificate}}) {
    if (!parser.isSet(*option)) continue;
    const QString file = parser.value(*option);
    if (!QFileInfo(file).isFile()) {
      return usageError(QStringLiteral("--%1: no such file: %2").arg(option->names().front(), file));
    }
    *target = file.toStdString();
  }
  if (parser.isSet(noHistory)) parsed.options.history = false;
  if (parser.isSet(view)) {
    const QString name = parser.value(view).toLower();
    if (name == QLatin1String("charts")) {
      parsed.options.view = livemon::ui::DashboardView::Charts;
    } else if (name == QLatin1String("ranges")) {
      parsed.options.view = livemon::ui::DashboardView::Ranges;
    } else if (name == QLatin1String("ranks")) {
      parsed.options.view = livemon::ui::DashboardView::Ranks;
    } else {
      return usageError(QStringLiteral("--view must be charts, ranges or ranks, not '%1'").arg(parser.value(view)));
    }
  }
  for (const QString& endpoint : parser.positionalArguments()) {
    if (endpoint.endsWith(QStringLiteral(".mcap"), Qt::CaseInsensitive) && !endpoint.contains(QStringLiteral("://"))) {
      if (!parsed.options.replay.isEmpty()) {
        return usageError(QStringLiteral("only one recording can be replayed at a time; open the others with --baseline"));
      }
      parsed.options.replay = endpoint;
      continue;
    }
    if (!endpoint.contains(QStringLiteral("://")) && QFileInfo(endpoint).isDir()) {
      if (!parsed.options.folder.isEmpty()) {
        return usageError(QStringLiteral("only one folder of runs can be opened at a time, not '%1' and '%2'")
                              .arg(parsed.options.folder, endpoint));
      }
      parsed.options.folder = endpoint;
      continue;
    }
    if (!endpoint.contains(QStringLiteral("://"))) {
      return usageError(QStringLiteral("'%1' is not an endpoint (expected transport://address, e.g. tcp://127.0.0.1:5555), "
                                       "a recording (FILE.mcap) or a folder")
                            .arg(endpoint));
    }
    parsed.options.endpoints.push_back(endpoint.toStdString());
  }
  parsed.options.baselines = parser.values(baseline);
  if (parser.isSet(seek)) {
    bool ok = false;
    const double seconds = parser.value(seek).toDouble(&ok);
    if (!ok || !(seconds >= 0)) {
      return usageError(QStringLiteral("--seek must be a number of seconds, 0 or more, not '%1'").arg(parser.value(seek)));
    }
    parsed.options.replaySeekSeconds = seconds;
  }
  parsed.options.replayPlay = parser.isSet(play);
  if ((parser.isSet(seek) || parsed.options.replayPlay) && parsed.options.replay.isEmpty()) {
    return usageError(QStringLiteral("--seek and --play need a recording to replay (FILE.mcap)"));
  }
  // A recording or a folder alone is looked at by itself; with endpoints, beside them.
  if (parsed.options.endpoints.empty() && (!parsed.options.replay.isEmpty() || !parsed.options.baselines.isEmpty())) {
    parsed.options.exactEndpoints = !parsed.options.replay.isEmpty();
  }
  if (parsed.options.endpoints.empty() && !parsed.options.folder.isEmpty()) parsed.options.exactEndpoints = true;
  return parsed;
}

// The arguments without those QApplication handles itself (-platform offscreen, -geometry WxH, ...),
// so they reach Qt instead of being refused as unknown options.
QStringList withoutQtOptions(int argc, char** argv) {
  static const QStringList withValue{
      QStringLiteral("-platform"),   QStringLiteral("-platformpluginpath"), QStringLiteral("-platformtheme"),
      QStringLiteral("-plugin"),     QStringLiteral("-qwindowgeometry"),    QStringLiteral("-qwindowicon"),
      QStringLiteral("-qwindowtitle"), QStringLiteral("-session"),          QStringLiteral("-style"),
      QStringLiteral("-stylesheet"), QStringLiteral("-display"),            QStringLiteral("-geometry"),
      QStringLiteral("-title"),      QStringLiteral("-name")};
  static const QStringList flags{QStringLiteral("-reverse"), QStringLiteral("-widgetcount"), QStringLiteral("-sync"),
                                 QStringLiteral("-nograb"), QStringLiteral("-dograb")};
  QStringList arguments;
  for (int i = 0; i < argc; ++i) {
    const QString argument = QString::fromLocal8Bit(argv[i]);
    const QString name = argument.section(QLatin1Char('='), 0, 0);
    if (i > 0 && withValue.contains(name)) {
      if (!argument.contains(QLatin1Char('='))) ++i;  // its value is the next argument
      continue;
    }
    if (i > 0 && flags.contains(argument)) continue;
    arguments << argument;
  }
  return arguments;
}

}  // namespace

int main(int argc, char** argv) {
  const QStringList arguments = withoutQtOptions(argc, argv);
  // Arguments first: --help and usage errors must work without a display.
  Parsed parsed = parseArguments(arguments);
  if (parsed.exit) return parsed.exitCode;

  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
      qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
    std::fputs("livemon: no display (DISPLAY and WAYLAND_DISPLAY are unset). On a headless machine run it under "
               "xvfb-run, or watch from a terminal with: livemonctl tail ENDPOINT\n",
               stderr);
    return 1;
  }

  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("livemon"));
  QApplication::setApplicationName(QStringLiteral("livemon"));
  QApplication::setApplicationVersion(QStringLiteral(LIVEMON_VERSION));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/livemon/livemon.png")));
  livemon::ui::applyDashboardStyle(app);

  try {
    livemon::ui::MainWindow window(std::move(parsed.options));
    window.show();
    return QApplication::exec();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "livemon: %s\n", error.what());
    return kUsageError;
  }
}
