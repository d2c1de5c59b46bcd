#include <livemon/ui/replay/folder_scan.h>

#include <algorithm>
#include <set>
#include <utility>

#include <QDateTime>
#include <QDirIterator>
#include <QFileInfo>

namespace livemon::ui {

FolderListing listRecordings(const QString& folder, const FolderScanLimits& limits) {
  FolderListing listing;
  std::set<QString> seenDirectories;  // canonical paths
  std::set<QString> seenFiles;        // canonical paths: a recording reached twice is one
  std::vector<std::pair<QString, int>> pending{{folder, 0}};
  std::size_t entries = 0;
  while (!pending.empty()) {
    auto [directory, depth] = std::move(pending.back());
    pending.pop_back();
    const QString canonical = QFileInfo(directory).canonicalFilePath();
    if (canonical.isEmpty()) continue;  // gone since it was listed
    if (!seenDirectories.insert(canonical).second) {
      ++listing.loops;
      continue;
    }
    listing.directories << directory;
    QDirIterator it(directory, QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden);
    while (it.hasNext()) {
      if (++entries > limits.maxEntries) {
        listing.truncated = true;
        break;
      }
      it.next();
      const QFileInfo entry = it.fileInfo();
      if (entry.isDir()) {
        if (depth < limits.maxDepth) {
          pending.emplace_back(entry.filePath(), depth + 1);
        } else {
          listing.truncated = true;
        }
      } else if (entry.isFile() && entry.suffix().compare(QLatin1String("mcap"), Qt::CaseInsensitive) == 0 &&
                 seenFiles.insert(entry.canonicalFilePath()).second) {
        listing.recordings.push_back({entry.filePath(), entry.size(), entry.lastModified().toMSecsSinceEpoch()});
      }
    }
    if (listing.truncated) break;
  }
  std::sort(listing.recordings.begin(), listing.recordings.end(),
            [](const FoundRecording& a, const FoundRecording& b) { return a.path < b.path; });
  return listing;
}

}  // namespace livemon::ui
