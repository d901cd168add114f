// A second server bootstrapped from another server's
// PMIx_server_collect_job_info buffer (spec 002: "bootstrapping a peer
// server"), using the public API only:
//
//   peer_server <buffer file> <tmpdir> <client> [client steps...]
//
// It unpacks every (namespace, byte object) pair, registers each namespace
// from the info array inside (and rank 0 as a local client), runs the
// client as rank 0 of the first namespace, relays its output, and exits
// with its status.
#include <pmix.h>
#include <pmix_server.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

static int fail(const char* what, pmix_status_t rc) {
  std::fprintf(stderr, "peer_server: %s: %s\n", what, PMIx_Error_string(rc));
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string blob = bytes.str();
  pmix_info_t tmp;
  PMIX_INFO_LOAD(&tmp, PMIX_SERVER_TMPDIR, argv[2], PMIX_STRING);
  pmix_status_t rc = PMIx_server_init(nullptr, &tmp, 1);
  PMIX_INFO_DESTRUCT(&tmp);
  if (rc != PMIX_SUCCESS) return fail("PMIx_server_init", rc);

  pmix_data_buffer_t* buf = PMIx_Data_buffer_create();
  char* copy = static_cast<char*>(std::malloc(blob.size()));
  std::memcpy(copy, blob.data(), blob.size());
  PMIx_Data_buffer_load(buf, copy, blob.size());
  std::string first;
  // One byte object per namespace: its name, then its job-level items, one
  // PMIX_INFO each, to the end of the bytes (docs/collect-and-progress.md).
  for (;;) {
    pmix_byte_object_t bo;
    int32_t n = 1;
    rc = PMIx_Data_unpack(nullptr, buf, &bo, &n, PMIX_BYTE_OBJECT);
    if (rc == PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER) break;
    if (rc != PMIX_SUCCESS) return fail("unpack byte object", rc);
    pmix_data_buffer_t* inner = PMIx_Data_buffer_create();
    PMIx_Data_buffer_load(inner, bo.bytes, bo.size);  // the buffer owns bo's bytes now
    char* nspace = nullptr;
    n = 1;
    rc = PMIx_Data_unpack(nullptr, inner, &nspace, &n, PMIX_STRING);
    if (rc != PMIX_SUCCESS) return fail("unpack namespace", rc);
    std::vector<pmix_info_t> items;
    for (;;) {
      pmix_info_t one;
      n = 1;
      rc = PMIx_Data_unpack(nullptr, inner, &one, &n, PMIX_INFO);
      if (rc == PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER) break;
      if (rc != PMIX_SUCCESS) return fail("unpack info", rc);
      items.push_back(one);
    }
    PMIx_Data_buffer_release(inner);
    const size_t ninfo = items.size();
    rc = PMIx_server_register_nspace(nspace, 1, items.data(), ninfo, nullptr, nullptr);
    for (auto& i : items) PMIX_INFO_DESTRUCT(&i);
    if (rc != PMIX_SUCCESS) return fail("register_nspace", rc);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, 0);
    rc = PMIx_server_register_client(&p, getuid(), getgid(), nullptr, nullptr, nullptr);
    if (rc != PMIX_SUCCESS) return fail("register_client", rc);
    std::printf("registered %s with %zu info\n", nspace, ninfo);
    if (first.empty()) first = nspace;
    std::free(nspace);
  }
  PMIx_Data_buffer_release(buf);
  if (first.empty()) return fail("the buffer named no namespace", PMIX_ERR_NOT_FOUND);

  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, first.c_str(), 0);
  char** env = nullptr;
  for (char** e = environ; *e != nullptr; ++e) PMIX_ARGV_APPEND(rc, env, *e);
  PMIx_server_setup_fork(&p, &env);
  std::fflush(stdout);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execve(argv[3], argv + 3, env);
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  PMIX_ARGV_FREE(env);
  PMIx_server_finalize();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
