#define _GNU_SOURCE
/* Preloaded into a server's process by tests (LD_PRELOAD): syslog() and
 * its fortified forms write "pri=<priority> <message>" lines to the file
 * $SYSLOG_SHIM_FILE instead of the system log, so a test reads exactly the
 * priority (facility and severity) and text the library logged. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void record(int priority, const char* format, va_list ap) {
  const char* path = getenv("SYSLOG_SHIM_FILE");
  if (path == NULL) return;
  char text[8192];
  int n = snprintf(text, sizeof text, "pri=%d ", priority);
  if (n < 0 || (size_t)n >= sizeof text) return;
  int m = vsnprintf(text + n, sizeof text - (size_t)n - 1, format, ap);
  if (m < 0) return;
  size_t len = strlen(text);
  text[len++] = '\n';
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  ssize_t written = write(fd, text, len);
  (void)written;
  close(fd);
}

void vsyslog(int priority, const char* format, va_list ap) { record(priority, format, ap); }

void syslog(int priority, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  record(priority, format, ap);
  va_end(ap);
}

void __syslog_chk(int priority, int flag, const char* format, ...) {
  (void)flag;
  va_list ap;
  va_start(ap, format);
  record(priority, format, ap);
  va_end(ap);
}

void __vsyslog_chk(int priority, int flag, const char* format, va_list ap) {
  (void)flag;
  record(priority, format, ap);
}
