/* Linked into every MPI program here. Built with the asan config
 * (docs/security.md, "Sanitizers"), a program does not check its leaks at
 * exit: Open MPI 4.1.4 (libmpi, ORTE, OPAL, hwloc and the components it
 * dlopens and closes again) leaves dozens of blocks unfreed at MPI_Finalize,
 * and their stacks cannot be told from ours by a suppression (frames without
 * frame pointers, modules already unloaded). Every other check of ASan and
 * UBSan still applies. Our library's leaks are checked by the tests whose
 * clients are ours (tests/e2e, tests/tools). */
#if defined(__SANITIZE_ADDRESS__)
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return 1; }
#endif
