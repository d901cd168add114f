"""Fuzz targets: a libFuzzer binary (clang, `--config=fuzz`, tagged manual)
and a regression test (any toolchain) per target. See docs/security.md,
"Fuzzing"."""

load("//bazel:defs.bzl", "PMIX_COPTS")

def pmix_fuzz_target(name, deps = []):
    """`<name>_fuzz.cpp` defines LLVMFuzzerTestOneInput.

    <name>_fuzz: the fuzzer (libFuzzer's main). Manual: gcc has no
    libFuzzer, so `bazel build //...` leaves it out; tools/fuzz.sh builds it
    with `--config=fuzz` in an output base of its own.
    <name>_regression_test: the same code with regression_main.cpp, run on
    every file of corpus/<name>/ and regressions/<name>/.
    """
    srcs = [name + "_fuzz.cpp"]
    all_deps = deps + [":fuzz_support"]
    native.cc_binary(
        name = name + "_fuzz",
        srcs = srcs,
        copts = PMIX_COPTS,
        deps = all_deps,
        linkstatic = True,
        tags = ["manual"],
        testonly = True,
    )
    native.cc_test(
        name = name + "_regression_test",
        size = "small",
        srcs = srcs + ["regression_main.cpp"],
        copts = PMIX_COPTS,
        deps = all_deps,
        linkstatic = True,
        args = [
            "tests/fuzz/corpus/" + name,
            "tests/fuzz/regressions/" + name,
        ],
        data = native.glob([
            "corpus/" + name + "/**",
            "regressions/" + name + "/**",
        ]),
    )
