// The module cache: a directory of the server user's alone, files 0600, a
// quota kept by dropping the least recently used images.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "server/worker/module_cache.hpp"

using rgpu::server::ModuleCache;
namespace fs = std::filesystem;

namespace {

std::string fresh_dir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/rgpu-module-cache-" + name + "-" + std::to_string(getpid());
  fs::remove_all(dir);
  return dir;
}

std::vector<uint8_t> image(size_t bytes, uint8_t tag) { return std::vector<uint8_t>(bytes, tag); }

// Sets a file's modification time `seconds_ago` in the past, so that the
// order of entries does not hang on the clock's resolution.
void age(const std::string& path, int seconds_ago) {
  timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= seconds_ago;
  times[1] = times[0];
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

const auto kAnySize = [](uint64_t) { return true; };

}  // namespace

TEST(ModuleCache, PreparesItsDirectoryAndRefusesOneOthersControl) {
  std::string base = fresh_dir("prepare");
  fs::create_directories(base);
  std::string why;
  std::string made = base + "/made";
  ASSERT_TRUE(ModuleCache::prepare_directory(made, &why)) << why;
  struct stat st {};
  ASSERT_EQ(stat(made.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  std::string open_dir = base + "/open";
  fs::create_directories(open_dir);
  chmod(open_dir.c_str(), 0777);
  EXPECT_FALSE(ModuleCache::prepare_directory(open_dir, &why));
  EXPECT_NE(why.find("writable"), std::string::npos) << why;

  why.clear();
  std::string link = base + "/link";
  fs::create_directory_symlink(made, link);
  EXPECT_FALSE(ModuleCache::prepare_directory(link, &why));
  EXPECT_NE(why.find("link"), std::string::npos) << why;
}

TEST(ModuleCache, StoresFilesOnlyItsOwnerMayReadAndFindsThemWithinWhatMayBeHeld) {
  std::string dir = fresh_dir("store");
  std::string why;
  ASSERT_TRUE(ModuleCache::prepare_directory(dir, &why)) << why;
  ModuleCache cache(dir, 0);
  auto stored = image(1000, 1);
  std::string hash = cache.store(stored);
  struct stat st {};
  ASSERT_EQ(stat((dir + "/" + hash + ".fatbin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(cache.find(hash, [](uint64_t n) { return n < 1000; }));
  auto found = cache.find(hash, kAnySize);
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, stored);
  EXPECT_FALSE(cache.find("../" + hash, kAnySize));
}

TEST(ModuleCache, QuotaDropsTheLeastRecentlyUsedImages) {
  std::string dir = fresh_dir("quota");
  std::string why;
  ASSERT_TRUE(ModuleCache::prepare_directory(dir, &why)) << why;
  ModuleCache cache(dir, 3000);
  std::vector<std::string> hashes;
  for (uint8_t i = 0; i < 3; ++i) {
    hashes.push_back(cache.store(image(1000, i)));
    age(dir + "/" + hashes.back() + ".fatbin", 100 - i);
  }
  ASSERT_TRUE(cache.find(hashes[0], kAnySize));  // used: now the newest
  hashes.push_back(cache.store(image(1000, 3)));
  EXPECT_TRUE(fs::exists(dir + "/" + hashes[0] + ".fatbin"));
  EXPECT_FALSE(fs::exists(dir + "/" + hashes[1] + ".fatbin"));
  EXPECT_TRUE(fs::exists(dir + "/" + hashes[2] + ".fatbin"));
  EXPECT_TRUE(fs::exists(dir + "/" + hashes[3] + ".fatbin"));
  // One image larger than the whole quota is not stored at all.
  std::string big = cache.store(image(4000, 9));
  EXPECT_FALSE(fs::exists(dir + "/" + big + ".fatbin"));
}
