"""Build settings shared by every package: warning flags and the protobuf genrule."""

# Warnings are defined once here; every cc_* target uses PMIX_COPTS.
PMIX_COPTS = [
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
    "-Wno-missing-field-initializers",
]

# The library's own code is compiled with hidden visibility; the public C API
# marks its symbols with PMIX_EXPORT (api/include/pmix_common.h).
# C programs (the demo, the benchmarks) link only the libraries they use, as
# `gcc` links a C program: Bazel's C++ toolchain otherwise adds libstdc++ and
# libm to every binary, and each process would load them for nothing.
PMIX_C_PROGRAM_LINKOPTS = ["-Wl,--as-needed"]

PMIX_LIB_COPTS = PMIX_COPTS + ["-fvisibility=hidden", "-fvisibility-inlines-hidden", "-fPIC"]

def pmix_proto_library(name, src, deps = [], visibility = None):
    """Runs the system protoc on one .proto and wraps the output in a cc_library.

    The generated code uses the lite runtime (the client library stays light);
    include it as "<package>/<basename>.pb.h".
    """
    base = src[:-len(".proto")]
    native.genrule(
        name = name + "_genproto",
        srcs = [src],
        outs = [base + ".pb.h", base + ".pb.cc"],
        cmd = "protoc --proto_path=. --cpp_out=$(GENDIR) $(SRCS)",
    )
    native.cc_library(
        name = name,
        srcs = [base + ".pb.cc"],
        hdrs = [base + ".pb.h"],
        copts = ["-fvisibility=hidden", "-fPIC", "-w"],
        deps = deps + ["//bazel:protobuf_lite"],
        visibility = visibility,
    )

def pmix_cc_test(name, srcs, deps = [], copts = [], **kwargs):
    """A doctest unit test. Linked statically: the library's objects are built
    with hidden visibility, so they cannot be linked as shared libraries."""
    native.cc_test(
        name = name,
        srcs = srcs,
        copts = PMIX_COPTS + copts,
        deps = deps + ["//bazel:doctest_main"],
        linkstatic = True,
        **kwargs
    )
