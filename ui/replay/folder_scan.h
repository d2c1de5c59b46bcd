#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <QString>
#include <QStringList>

namespace livemon::ui {

// Thread-safety: a plain value type.
// How far listRecordings() looks: a folder of any size, or one whose symbolic links loop, costs at
// most this much.
struct FolderScanLimits {
  std::size_t maxEntries = 100'000;  // directory entries looked at, in all
  int maxDepth = 32;                 // subfolders below the folder
};

// Thread-safety: a plain value type.
// A recording found under a folder, as the directory listing gives it.
struct FoundRecording {
  QString path;     // as reached from the folder (symbolic links not resolved)
  int64_t size = 0;
  int64_t modifiedMs = 0;  // last modification, ms since the Unix epoch
};

// Thread-safety: a plain value type.
// What listRecordings() found.
struct FolderListing {
  std::vector<FoundRecording> recordings;  // in path order, each file once
  QStringList directories;                 // the folder and the subfolders looked into
  bool truncated = false;                  // a limit was reached: some of the folder was not looked at
  std::size_t loops = 0;                   // directories reached again through a symbolic link, skipped
};

// Every *.mcap file (a regular file, or a link to one) under `folder`, in its subfolders too.
// Symbolic links to directories are followed, each directory looked into once (by its canonical
// path), so a link loop ends. Reads the directories only, never the files. Any thread.
FolderListing listRecordings(const QString& folder, const FolderScanLimits& limits = {});

}  // namespace livemon::ui
