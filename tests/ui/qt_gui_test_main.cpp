// The main of the dashboard tests that need no widgets (models, ingest, replay): a
// QGuiApplication on the offscreen platform (unless the environment picks another), then
// GoogleTest.
#include <gtest/gtest.h>

#include <QGuiApplication>

int main(int argc, char** argv) {
  // ctest sets this too; test discovery at build time does not.
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
