// The fuzz targets' regression tests (tests/fuzz/BUILD.bazel): a main that
// feeds every file of the directories it is given (the seed corpus, the
// crash reproducers) to the target's LLVMFuzzerTestOneInput, built with the
// normal toolchain, so CI runs every committed input on every run. A crash
// or a failed FUZZ_CHECK fails the test; it names the file first.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void list_files(const std::string& dir, std::vector<std::string>& out) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) list_files(path, out);
    else if (S_ISREG(st.st_mode)) out.push_back(path);
  }
  closedir(d);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [REGRESSION_DIR...]\n", argv[0]);
    return 2;
  }
  std::vector<std::string> files;
  for (int k = 1; k < argc; ++k) {
    const auto before = files.size();
    list_files(argv[k], files);
    std::printf("%s: %zu inputs\n", argv[k], files.size() - before);
  }
  // The seed corpus must not be empty: a missing directory is a broken test.
  std::vector<std::string> seeds;
  list_files(argv[1], seeds);
  if (seeds.empty()) {
    std::fprintf(stderr, "no inputs in %s\n", argv[1]);
    return 1;
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::fprintf(stderr, "running %s (%zu bytes)\n", path.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%zu inputs ran without a failure\n", files.size());
  return 0;
}
