// privateEndpoint(): an ipc:// endpoint in a directory only this user may enter, the per-user
// alternative to loopback TCP on a shared machine (docs/security.md, "Shared machines").
#include <livemon/transport/private_endpoint.h>

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <livemon/transport/error.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/subscriber.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

namespace fs = std::filesystem;

// XDG_RUNTIME_DIR set to `value` for one test, restored after.
class RuntimeDir {
 public:
  explicit RuntimeDir(const std::string& value) {
    if (const char* old = getenv("XDG_RUNTIME_DIR")) saved_ = old;
    setenv("XDG_RUNTIME_DIR", value.c_str(), 1);
  }
  ~RuntimeDir() {
    if (saved_) setenv("XDG_RUNTIME_DIR", saved_->c_str(), 1);
    else unsetenv("XDG_RUNTIME_DIR");
  }

 private:
  std::optional<std::string> saved_;
};

unsigned modeOf(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(lstat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

TEST(PrivateEndpoint, LivesInADirectoryOnlyThisUserMayEnterAndCarriesEvents) {
  test::TempDir runtime;
  RuntimeDir environment(runtime.path().string());
  const std::string endpoint = privateEndpoint("train");
  const fs::path directory = runtime.path() / "livemon";
  EXPECT_EQ(endpoint, "ipc://" + (directory / "train").string());
  EXPECT_EQ(modeOf(directory), 0700u);
  EXPECT_EQ(privateEndpoint("train"), endpoint) << "the same again, the directory kept";

  PublisherOptions options = test::testPublisherOptions(endpoint);
  options.handleLoggedEvents = false;
  Publisher publisher(options);
  ASSERT_TRUE(fs::exists(directory / "train"));
  EXPECT_TRUE(fs::is_socket(directory / "train"));
  EXPECT_EQ(modeOf((directory / "train").parent_path()), 0700u) << "the socket file's directory";
  Subscriber subscriber(test::connectTo({endpoint}));
  ASSERT_TRUE(test::waitForSource(subscriber, publisher.identity()));
  std::size_t received = 0;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](const ReceivedEvent&) { ++received; };
  publisher.publish(test::makeEvent("private", {{"x", 1.0}}));
  EXPECT_TRUE(test::pollUntil(subscriber, callbacks, [&] { return received == 1; }));
}

// A directory someone else could enter, or a symlink put in its place, is refused, not used.
TEST(PrivateEndpoint, RefusesADirectoryOthersMayEnterOrASymlink) {
  test::TempDir runtime;
  RuntimeDir environment(runtime.path().string());
  const fs::path directory = runtime.path() / "livemon";
  ASSERT_EQ(mkdir(directory.c_str(), 0755), 0);
  ASSERT_EQ(chmod(directory.c_str(), 0755), 0);  // whatever the umask
  try {
    privateEndpoint("train");
    ADD_FAILURE() << "used a directory of mode 0755";
  } catch (const TransportError& error) {
    EXPECT_NE(std::string(error.what()).find(directory.string()), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("0755"), std::string::npos) << error.what();
  }
  fs::remove(directory);
  test::TempDir elsewhere;
  fs::create_directory_symlink(elsewhere.path(), directory);
  EXPECT_THROW(privateEndpoint("train"), TransportError);
}

TEST(PrivateEndpoint, RefusesNamesThatAreNotOnePathComponent) {
  test::TempDir runtime;
  RuntimeDir environment(runtime.path().string());
  for (const std::string& name : std::vector<std::string>{"", ".", "..", "a/b", std::string(200, 'n')}) {
    EXPECT_THROW(privateEndpoint(name), std::invalid_argument) << name;
  }
}

}  // namespace
}  // namespace livemon::transport
