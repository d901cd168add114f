/* allreduce.c: MPI_Allreduce of a sum, a max, a min and a vector of doubles,
 * checked against their closed forms.  Optional argv[1]: the expected world size.
 *
 * Output: a "FAIL allreduce: ..." line for every failed check, "OK allreduce rank=R size=N"
 * from every rank that passed, and "OK allreduce all ranks=N" from rank 0 when every rank passed.
 * Every rank exits non-zero when any rank failed a check. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { VECTOR_LENGTH = 64 };

static int failures = 0;

static void check(int ok, int rank, const char *what, double got, double want)
{
    if (!ok) {
        printf("FAIL allreduce: rank %d: %s: got %.17g, want %.17g\n", rank, what, got, want);
        fflush(stdout);
        ++failures;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (argc > 1) {
        int expected = atoi(argv[1]);
        check(size == expected, rank, "MPI_Comm_size vs argv[1]", size, expected);
    }
    check(rank >= 0 && rank < size, rank, "rank within [0,size)", rank, 0);

    /* sum of ranks: n(n-1)/2, exact in 64-bit integers */
    long long my_rank = rank, sum = -1;
    MPI_Allreduce(&my_rank, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    long long want_sum = (long long)size * (size - 1) / 2;
    check(sum == want_sum, rank, "sum of ranks", (double)sum, (double)want_sum);

    /* max and min of (rank + 100) */
    int shifted = rank + 100, max = -1, min = -1;
    MPI_Allreduce(&shifted, &max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&shifted, &min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    check(max == size - 1 + 100, rank, "max of rank+100", max, size - 1 + 100);
    check(min == 100, rank, "min of rank+100", min, 100);

    /* vector of doubles: element i on rank r is (r+1)*(i+1) + 0.5; the sum over ranks is
     * (i+1)*n(n+1)/2 + n/2, exactly representable, so exact comparison is right */
    double in[VECTOR_LENGTH], out[VECTOR_LENGTH];
    for (int i = 0; i < VECTOR_LENGTH; ++i) {
        in[i] = (double)(rank + 1) * (i + 1) + 0.5;
        out[i] = -1.0;
    }
    MPI_Allreduce(in, out, VECTOR_LENGTH, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < VECTOR_LENGTH; ++i) {
        double want = (double)(i + 1) * ((double)size * (size + 1) / 2) + size * 0.5;
        char what[64];
        snprintf(what, sizeof what, "vector sum element %d", i);
        check(out[i] == want, rank, what, out[i], want);
    }

    /* every rank learns whether any rank failed */
    int total_failures = -1;
    MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failures == 0) {
        printf("OK allreduce rank=%d size=%d\n", rank, size);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (total_failures == 0)
            printf("OK allreduce all ranks=%d\n", size);
        else
            printf("FAIL allreduce: %d failed checks over %d ranks\n", total_failures, size);
        fflush(stdout);
    }
    MPI_Finalize();
    return total_failures == 0 ? 0 : 1;
}
