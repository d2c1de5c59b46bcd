// The livemon program's command line: a folder argument opens it as runs (`livemon DIR`), and what
// it refuses (usage, exit status 2). Runs the program (livemon, as built) without a window: --help
// and usage errors are handled before the display is looked for.
#include <gtest/gtest.h>

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>

#include "test_paths.h"

namespace {

struct Outcome {
  int status = -1;
  QString out;
  QString err;
};

Outcome run(const QStringList& arguments) {
  QProcess process;
  process.start(QString::fromStdString(livemon::test_paths::builtFile("livemon")), arguments);
  EXPECT_TRUE(process.waitForFinished(60'000));
  return {process.exitCode(), QString::fromUtf8(process.readAllStandardOutput()),
          QString::fromUtf8(process.readAllStandardError())};
}

TEST(LivemonCommandLineTest, HelpNamesTheFolderArgument) {
  const Outcome help = run({QStringLiteral("--help")});
  EXPECT_EQ(help.status, 0);
  EXPECT_TRUE(help.out.contains(QStringLiteral("[DIR]"))) << help.out.toStdString();
  EXPECT_TRUE(help.out.contains(QStringLiteral("A DIR argument opens every recording under DIR"))) << help.out.toStdString();
}

TEST(LivemonCommandLineTest, TwoFoldersOrAPathThatIsNothingAreUsageErrors) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  ASSERT_TRUE(QDir(dir.path()).mkpath(QStringLiteral("a")));
  ASSERT_TRUE(QDir(dir.path()).mkpath(QStringLiteral("b")));
  const Outcome two = run({dir.filePath(QStringLiteral("a")), dir.filePath(QStringLiteral("b"))});
  EXPECT_EQ(two.status, 2);
  EXPECT_TRUE(two.err.contains(QStringLiteral("only one folder of runs"))) << two.err.toStdString();
  EXPECT_TRUE(two.err.contains(QStringLiteral("Usage: livemon"))) << two.err.toStdString();

  const Outcome missing = run({dir.filePath(QStringLiteral("no-such-folder"))});
  EXPECT_EQ(missing.status, 2);
  EXPECT_TRUE(missing.err.contains(QStringLiteral("a recording (FILE.mcap) or a folder"))) << missing.err.toStdString();
}

}  // namespace
