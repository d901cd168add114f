// Epilogs: what a registered cleanup removes, and what it must leave alone.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "actors/epilog.hpp"

using namespace pmix;
using namespace pmix::actors;

namespace {

struct scratch {
  std::string root;
  scratch() {
    char pattern[] = "/tmp/pmixepi.XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    root = pattern;
  }
  ~scratch() { [[maybe_unused]] const int rc = std::system(("rm -rf " + root).c_str()); }
  std::string file(const std::string& rel) {
    const auto p = root + "/" + rel;
    std::ofstream(p) << "x";
    return p;
  }
  std::string dir(const std::string& rel) {
    const auto p = root + "/" + rel;
    REQUIRE(::mkdir(p.c_str(), 0755) == 0);
    return p;
  }
};

bool exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

info_list cleanup(const char* key, const std::string& paths, info_list extra = {}) {
  extra.insert(extra.begin(), info{key, value::string(paths), 0});
  return extra;
}

info flag(const char* key) { return info{key, value::boolean(true), 0}; }

}  // namespace

TEST_SUITE("epilog") {
  TEST_CASE("registered files are removed when the epilog runs, once") {
    scratch s;
    const auto a = s.file("a"), b = s.file("b"), keep = s.file("keep");
    epilog e;
    std::string error;
    REQUIRE(e.add(cleanup(PMIX_REGISTER_CLEANUP, a + "," + b), 0, error) == PMIX_SUCCESS);
    CHECK(exists(a));
    CHECK(e.run() == 2);
    CHECK_FALSE(exists(a));
    CHECK_FALSE(exists(b));
    CHECK(exists(keep));
    s.file("a");
    CHECK(e.run() == 0);  // an epilog runs once
    CHECK(exists(a));
  }

  TEST_CASE("a directory is emptied of files and removed; subdirectories only when recursive") {
    scratch s;
    const auto d = s.dir("d");
    s.file("d/f1");
    s.dir("d/sub");
    s.file("d/sub/f2");
    epilog shallow;
    std::string error;
    REQUIRE(shallow.add(cleanup(PMIX_REGISTER_CLEANUP_DIR, d), 0, error) == PMIX_SUCCESS);
    shallow.run();
    CHECK_FALSE(exists(d + "/f1"));
    CHECK(exists(d + "/sub/f2"));  // not recursive: the subdirectory stays
    CHECK(exists(d));              // and so the directory is not empty

    epilog deep;
    REQUIRE(deep.add(cleanup(PMIX_REGISTER_CLEANUP_DIR, d, {flag(PMIX_CLEANUP_RECURSIVE)}), 0, error) ==
            PMIX_SUCCESS);
    deep.run();
    CHECK_FALSE(exists(d));
  }

  TEST_CASE("PMIX_CLEANUP_LEAVE_TOPDIR, PMIX_CLEANUP_IGNORE and PMIX_CLEANUP_EMPTY") {
    scratch s;
    const auto d = s.dir("d");
    s.file("d/gone");
    s.file("d/precious");
    s.dir("d/empty");
    s.dir("d/full");
    s.file("d/full/f");
    epilog e;
    std::string error;
    REQUIRE(e.add(cleanup(PMIX_REGISTER_CLEANUP_DIR, d,
                          {flag(PMIX_CLEANUP_RECURSIVE), flag(PMIX_CLEANUP_LEAVE_TOPDIR),
                           info{PMIX_CLEANUP_IGNORE, value::string("precious"), 0}}),
                  0, error) == PMIX_SUCCESS);
    e.run();
    CHECK(exists(d));
    CHECK(exists(d + "/precious"));
    CHECK_FALSE(exists(d + "/gone"));
    CHECK_FALSE(exists(d + "/full"));

    const auto e2dir = s.dir("e");
    s.dir("e/empty");
    s.dir("e/full");
    s.file("e/full/f");
    epilog empties;
    REQUIRE(empties.add(cleanup(PMIX_REGISTER_CLEANUP_DIR, e2dir,
                                {flag(PMIX_CLEANUP_RECURSIVE), flag(PMIX_CLEANUP_EMPTY)}),
                        0, error) == PMIX_SUCCESS);
    empties.run();
    CHECK_FALSE(exists(e2dir + "/empty"));
    CHECK(exists(e2dir + "/full/f"));  // files stay with PMIX_CLEANUP_EMPTY
  }

  TEST_CASE("a symbolic link is removed itself, never followed") {
    scratch s;
    const auto target = s.file("target");
    const auto d = s.dir("d");
    REQUIRE(::symlink(s.root.c_str(), (d + "/up").c_str()) == 0);
    epilog e;
    std::string error;
    REQUIRE(e.add(cleanup(PMIX_REGISTER_CLEANUP_DIR, d, {flag(PMIX_CLEANUP_RECURSIVE)}), 0, error) ==
            PMIX_SUCCESS);
    e.run();
    CHECK_FALSE(exists(d));
    CHECK(exists(target));  // reachable only through the link: untouched
  }

  TEST_CASE("only the registering user's entries are removed") {
    scratch s;
    const auto mine = s.file("mine");
    const auto theirs = s.file("theirs");
    REQUIRE(::chown(mine.c_str(), 4242, 4242) == 0);
    REQUIRE(::chown(theirs.c_str(), 4343, 4343) == 0);
    epilog e;
    std::string error;
    REQUIRE(e.add(cleanup(PMIX_REGISTER_CLEANUP, mine + "," + theirs), 4242, error) == PMIX_SUCCESS);
    CHECK(e.run() == 1);
    CHECK_FALSE(exists(mine));
    CHECK(exists(theirs));
  }

  TEST_CASE("relative paths and non-string values are refused and add nothing") {
    epilog e;
    std::string error;
    CHECK(e.add(cleanup(PMIX_REGISTER_CLEANUP, "/tmp/ok,relative/path"), 0, error) == PMIX_ERR_BAD_PARAM);
    CHECK(error.find("absolute") != std::string::npos);
    CHECK(e.empty());
    CHECK(e.add({info{PMIX_REGISTER_CLEANUP_DIR, value::boolean(true), 0}}, 0, error) ==
          PMIX_ERR_BAD_PARAM);
    CHECK(e.empty());
    CHECK(epilog::is_cleanup(cleanup(PMIX_REGISTER_CLEANUP, "/x")));
    CHECK_FALSE(epilog::is_cleanup({flag(PMIX_CLEANUP_RECURSIVE)}));
  }

  TEST_CASE("what one process or job registers is bounded: a registration past epilog::max_weight is refused whole; "
            "a registration's paths share one ignore list") {
    // One frame of some 2 MiB: 250,000 paths and 250,000 ignored names. With
    // the list copied into every path that was 62.5 billion strings.
    std::string paths, names;
    for (int k = 0; k < 250000; ++k) {
      paths += k == 0 ? "/a" : ",/a";
      names += k == 0 ? "n" : ",n";
    }
    epilog big;
    std::string error;
    CHECK(big.add(cleanup(PMIX_REGISTER_CLEANUP, paths, {info{PMIX_CLEANUP_IGNORE, value::string(names), 0}}), 0,
                  error) == PMIX_ERR_OUT_OF_RESOURCE);
    CHECK(error.find("more than the 4194304") != std::string::npos);
    CHECK(big.empty());
    // Many small registrations: accepted until together they would pass it,
    // then refused (nothing of the refused one added); the weight counts
    // each entry's bytes and 64 for it.
    epilog many;
    const std::string one = "/tmp/pmix-cleanup-bound-" + std::string(100, 'x');  // 124 bytes: 188 with its 64
    const auto each = epilog::weight(cleanup(PMIX_REGISTER_CLEANUP, one));
    CHECK(each == one.size() + 64);
    std::size_t accepted = 0;
    while (many.add(cleanup(PMIX_REGISTER_CLEANUP, one), 0, error) == PMIX_SUCCESS) ++accepted;
    CHECK(accepted == epilog::max_weight / each);
    CHECK(many.items().size() == accepted);
    CHECK(error.find("more than") != std::string::npos);
    // Within the bound, the paths of one registration share its ignore list.
    epilog shared;
    REQUIRE(shared.add(cleanup(PMIX_REGISTER_CLEANUP_DIR, "/x,/y,/z", {info{PMIX_CLEANUP_IGNORE, value::string("keep,this"), 0}}),
                       0, error) == PMIX_SUCCESS);
    REQUIRE(shared.items().size() == 3);
    REQUIRE(shared.items()[0].ignore != nullptr);
    CHECK(*shared.items()[0].ignore == std::vector<std::string>{"keep", "this"});
    CHECK(shared.items()[1].ignore == shared.items()[0].ignore);
    CHECK(shared.items()[2].ignore == shared.items()[0].ignore);
  }

  TEST_CASE("[issue 14.2] swapping a directory for a symbolic link while the epilog runs leads it nowhere") {
    if (::getuid() != 0) FAIL("this test runs an attacker as another user: run it as root (CI does)");
    constexpr uid_t nobody = 65534;
    constexpr int files = 20000;
    scratch s;
    ::chmod(s.root.c_str(), 0755);
    const auto t = s.dir("t");       // the attacker's own directory
    const auto victim = s.dir("v");  // root's, with files of the same names
    REQUIRE(::chown(t.c_str(), nobody, nobody) == 0);
    const auto d = s.dir("t/d");
    REQUIRE(::chown(d.c_str(), nobody, nobody) == 0);
    const std::string stop = s.root + "/stop";
    for (int round = 0; round < 2; ++round) {
      CAPTURE(round);
      for (int k = 0; k < files; ++k) {
        const auto name = "/f" + std::to_string(k);
        std::ofstream(d + name) << "mine";
        REQUIRE(::chown((d + name).c_str(), nobody, nobody) == 0);
        std::ofstream(victim + name) << "root's";
      }
      ::unlink(stop.c_str());
      std::fflush(nullptr);
      const pid_t attacker = ::fork();
      REQUIRE(attacker >= 0);
      if (attacker == 0) {
        // Another user: flips its directory to a link to root's and back.
        if (::setgroups(0, nullptr) != 0 || ::setgid(nobody) != 0 || ::setuid(nobody) != 0) ::_exit(3);
        const std::string real = d + ".real";
        while (::access(stop.c_str(), F_OK) != 0) {
          if (::rename(d.c_str(), real.c_str()) != 0) continue;
          [[maybe_unused]] const int linked = ::symlink(victim.c_str(), d.c_str());
          ::unlink(d.c_str());
          ::rename(real.c_str(), d.c_str());
        }
        ::_exit(0);
      }
      epilog e;
      std::string error;
      REQUIRE(e.add(cleanup(PMIX_REGISTER_CLEANUP_DIR, d, {flag(PMIX_CLEANUP_RECURSIVE)}), nobody, error) ==
              PMIX_SUCCESS);
      e.run();
      std::ofstream(stop) << "";
      int status = 0;
      REQUIRE(::waitpid(attacker, &status, 0) == attacker);
      CHECK(WIFEXITED(status));
      int kept = 0;
      for (int k = 0; k < files; ++k) kept += exists(victim + "/f" + std::to_string(k)) ? 1 : 0;
      CHECK(kept == files);  // not one of root's files went
      // Leave the attacker's directory in place for the next round.
      if (!exists(d)) {
        REQUIRE(::mkdir(d.c_str(), 0755) == 0);
        REQUIRE(::chown(d.c_str(), nobody, nobody) == 0);
      }
    }
  }
}
