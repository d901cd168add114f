"""The end-to-end tests' one shape."""

load("//bazel:defs.bzl", "PMIX_COPTS")

def pmix_e2e_test(name, data = [], deps = [], size = "medium"):
    """An end-to-end test `<name>.cpp`: the test process is the host (it
    links the public library dynamically, beside the server runtime) and
    launches real client processes (`data`)."""
    native.cc_test(
        name = name,
        size = size,
        srcs = [
            name + ".cpp",
            "//api:libpmix.so.2",
        ],
        copts = PMIX_COPTS,
        data = data + ["//api:libpmix-server.so.2"],
        linkstatic = True,
        deps = deps + [
            ":host",
            "//bazel:dl",
            "//bazel:doctest_main",
        ],
    )
