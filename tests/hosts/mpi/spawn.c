/* spawn.c: the parent job spawns CHILDREN copies of this binary with MPI_Comm_spawn, both
 * sides merge the intercommunicator (parents first), check the merged size (parents +
 * CHILDREN), allreduce over it and check the result, then free, disconnect and finalize.
 *
 * A process is a child when MPI_Comm_get_parent returns a communicator; children get
 * argv = { "child", "<number of parents>" } and also check it against the remote size.
 *
 * With SPAWN_HOST set in the parents' environment, the children are placed on that host
 * (MPI_Info "host") and each child checks that its gethostname() is that host (the
 * parents pass it in argv).
 *
 * Output: "FAIL spawn: ..." per failed check; "OK spawn parent rank=R parents=P" and
 * "OK spawn child rank=R children=C parents=P host=H" per passing process; rank 0 of the parents
 * prints "OK spawn all parents=P children=C merged=M" when everyone passed.
 * Non-zero exit on any failure. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CHILDREN = 2 };

static int failures = 0;

static void check(int ok, const char *who, int rank, const char *what, long long got, long long want)
{
    if (!ok) {
        printf("FAIL spawn: %s rank %d: %s: got %lld, want %lld\n", who, rank, what, got, want);
        fflush(stdout);
        ++failures;
    }
}

/* The merged allreduce: every process contributes merged_rank + 1; the sum is m(m+1)/2.
 * Also returns the total failure count seen over the merged communicator. */
static int merged_phase(MPI_Comm inter, int is_child, const char *who, int rank,
                        int parents, int *merged_size_out)
{
    MPI_Comm merged = MPI_COMM_NULL;
    MPI_Intercomm_merge(inter, is_child /* high: children after parents */, &merged);
    int merged_rank = -1, merged_size = -1;
    MPI_Comm_rank(merged, &merged_rank);
    MPI_Comm_size(merged, &merged_size);
    check(merged_size == parents + CHILDREN, who, rank, "merged size", merged_size, parents + CHILDREN);
    int want_rank = is_child ? parents + rank : rank;
    check(merged_rank == want_rank, who, rank, "merged rank", merged_rank, want_rank);

    long long mine = merged_rank + 1, sum = -1;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, merged);
    long long want = (long long)merged_size * (merged_size + 1) / 2;
    check(sum == want, who, rank, "merged allreduce sum", sum, want);

    int total_failures = -1;
    MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, merged);
    MPI_Comm_free(&merged);
    *merged_size_out = merged_size;
    return total_failures;
}

static int run_child(MPI_Comm parent, int argc, char **argv)
{
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check(size == CHILDREN, "child", rank, "child world size", size, CHILDREN);

    int remote = -1;
    MPI_Comm_remote_size(parent, &remote);
    int parents_from_argv = -1;
    if (argc >= 3 && strcmp(argv[1], "child") == 0)
        parents_from_argv = atoi(argv[2]);
    check(parents_from_argv == remote, "child", rank, "argv parent count vs remote size",
          parents_from_argv, remote);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (argc == 4 && strcmp(host, argv[3]) != 0) {
        printf("FAIL spawn: child rank %d runs on %s, not on %s\n", rank, host, argv[3]);
        fflush(stdout);
        ++failures;
    }

    int merged_size = -1;
    int total_failures = merged_phase(parent, 1, "child", rank, remote, &merged_size);
    if (failures == 0) {
        printf("OK spawn child rank=%d children=%d parents=%d host=%s\n", rank, size, remote, host);
        fflush(stdout);
    }
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return total_failures == 0 ? 0 : 1;
}

static int run_parent(void)
{
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* spawn this very executable by absolute path: argv[0] may be relative */
    char self[4096];
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0) {
        printf("FAIL spawn: parent rank %d: readlink /proc/self/exe failed\n", rank);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    self[length] = '\0';

    char parents_text[16];
    snprintf(parents_text, sizeof parents_text, "%d", size);
    char *where = getenv("SPAWN_HOST");
    char *child_argv[] = { "child", parents_text, where, NULL };
    int errcodes[CHILDREN];
    for (int i = 0; i < CHILDREN; ++i)
        errcodes[i] = -1;

    MPI_Info info = MPI_INFO_NULL;
    if (where != NULL && *where != '\0') {
        MPI_Info_create(&info);
        MPI_Info_set(info, "host", where);
    }
    MPI_Comm inter = MPI_COMM_NULL;
    int rc = MPI_Comm_spawn(self, child_argv, CHILDREN, info, 0, MPI_COMM_WORLD, &inter, errcodes);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    check(rc == MPI_SUCCESS, "parent", rank, "MPI_Comm_spawn return code", rc, MPI_SUCCESS);
    if (rank == 0) /* errcodes are significant at the root only */
        for (int i = 0; i < CHILDREN; ++i)
            check(errcodes[i] == MPI_SUCCESS, "parent", rank, "spawn errcode", errcodes[i], MPI_SUCCESS);

    int remote = -1;
    MPI_Comm_remote_size(inter, &remote);
    check(remote == CHILDREN, "parent", rank, "intercomm remote size", remote, CHILDREN);

    int merged_size = -1;
    int total_failures = merged_phase(inter, 0, "parent", rank, size, &merged_size);
    if (failures == 0) {
        printf("OK spawn parent rank=%d parents=%d\n", rank, size);
        fflush(stdout);
    }
    MPI_Comm_disconnect(&inter);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (total_failures == 0)
            printf("OK spawn all parents=%d children=%d merged=%d\n", size, CHILDREN, merged_size);
        else
            printf("FAIL spawn: %d failed checks over parents and children\n", total_failures);
        fflush(stdout);
    }
    MPI_Finalize();
    return total_failures == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent = MPI_COMM_NULL;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return run_child(parent, argc, argv);
    return run_parent();
}
