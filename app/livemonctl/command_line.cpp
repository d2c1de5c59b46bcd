#include <livemonctl/command_line.h>

#include <unistd.h>

#include <cmath>
#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include <livemonctl/command.h>

namespace livemon::livemonctl {

CommandContext processContext(const std::atomic<bool>& stop) {
  return CommandContext{stop, std::cout, std::cerr, isatty(STDOUT_FILENO) != 0, isatty(STDERR_FILENO) != 0};
}

ParsedCommandLine parseCommandLine(CLI::App& app, const std::vector<Command>& commands, int argc,
                                   const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return {nullptr, app.exit(e, out, err)};
  } catch (const CLI::CallForAllHelp& e) {
    return {nullptr, app.exit(e, out, err)};
  } catch (const CLI::CallForVersion& e) {
    return {nullptr, app.exit(e, out, err)};
  } catch (const CLI::ParseError& e) {
    const CLI::App* usage = &app;
    for (const Command& command : commands) {
      if (command.cli->parsed()) usage = command.cli;
    }
    std::string message = e.what();
    if (usage == &app && argc > 1 && argv[1][0] != '-') message = std::string("unknown command \"") + argv[1] + "\"";
    return {nullptr, usageError(*usage, message, err)};
  }
  for (const Command& command : commands) {
    if (command.cli->parsed()) return {&command, 0};
  }
  // The app requires a subcommand, so CLI11 has already refused a command line without one.
  return {nullptr, usageError(app, "A subcommand is required", err)};
}

int dispatch(const Command& command, const CommandContext& context) {
  try {
    return command.run(context);
  } catch (const std::exception& error) {
    return reportUnexpected(command.cli->get_name(), context.err, error);
  }
}

int usageError(const CLI::App& command, const std::string& reason, std::ostream& err) {
  err << "livemonctl: " << reason << "\n\n" << command.help();
  return kUsageExitCode;
}

void addPublisherCurveOptions(CLI::App& command, transport::CurveOptions& curve, bool connects) {
  command.add_option("--curve-secret", curve.certificate,
                     "Encrypt and authenticate with CURVE: this side's NAME.key_secret (livemonctl keygen)")
      ->option_text("FILE")
      ->envname(std::string(transport::kCurveSecretEnvironmentVariable))
      ->check(CLI::ExistingFile);
  command.add_option("--curve-allow", curve.allow, "With --curve-secret: admit only the clients whose NAME.key is in DIR")
      ->option_text("DIR")
      ->envname(std::string(transport::kCurveAllowEnvironmentVariable))
      ->check(CLI::ExistingDirectory);
  if (connects) {
    command.add_option("--curve-server", curve.serverCertificate,
                       "With --curve-secret, connecting: the NAME.key of the relay connected to")
        ->option_text("FILE")
        ->envname(std::string(transport::kCurveServerEnvironmentVariable))
        ->check(CLI::ExistingFile);
  }
  command.add_flag("--require-curve", curve.require, "Refuse to bind an address beyond loopback without CURVE")
      ->envname(std::string(transport::kRequireCurveEnvironmentVariable));
}

void addClientCurveOptions(CLI::App& command, transport::CurveOptions& curve) {
  command.add_option("--curve-server", curve.serverCertificate,
                     "Encrypt and authenticate with CURVE: the publisher's or relay's NAME.key")
      ->option_text("FILE")
      ->envname(std::string(transport::kCurveServerEnvironmentVariable))
      ->check(CLI::ExistingFile);
  command.add_option("--curve-client", curve.certificate,
                     "With --curve-server: this side's NAME.key_secret (its NAME.key in the server's allow list)")
      ->option_text("FILE")
      ->envname(std::string(transport::kCurveClientEnvironmentVariable))
      ->check(CLI::ExistingFile);
}

const CLI::Validator& positiveFactor() {
  static const CLI::Validator validator(
      [](std::string& text) {
        double value = 0;
        return CLI::detail::lexical_cast(text, value) && std::isfinite(value) && value > 0 && value <= 1000
                   ? std::string()
                   : "must be a number above 0 and at most 1000, got " + text;
      },
      "F", "positive factor");
  return validator;
}

std::chrono::milliseconds secondsToMs(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0 + 0.5));
}

}  // namespace livemon::livemonctl
