#pragma once

#include <atomic>
#include <iosfwd>
#include <string>
#include <livemonctl/command_line.h>

// `livemonctl info`: what a recording holds.
namespace livemon::livemonctl {

// Thread-safety: a plain value type.
struct InfoOptions {
  std::string path{};
  bool json = false;
  bool progress = false;  // a status line on `err`, rewritten in place (a terminal)
};

// Prints a recording's duration, event count, counts per event name and per source, the steps
// its events carry (statedStep: first, last, lowest, highest and how many carry one; overall and
// per source), compression ratio and any damage found. Names, runs and hosts are printed through printableText() (JSON
// escapes them anyway). Returns 0, kFailedExitCode when the file is not a readable recording, or
// kInterruptedExitCode when `stop` became true first (nothing is printed to `out` then).
int runInfo(const InfoOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);
// The same without a way to stop it.
int runInfo(const InfoOptions& options, std::ostream& out, std::ostream& err);

// Adds `info` and its options to `app` (command_line.h).
Command addInfoCommand(CLI::App& app);

}  // namespace livemon::livemonctl
