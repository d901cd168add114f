/* ring.c: a token travels LAPS times around the ring 0 -> 1 -> ... -> n-1 -> 0 with
 * MPI_Send/MPI_Recv; every rank adds rank+1 to it.  Every receipt is checked against its
 * closed form, and the final value (LAPS * n(n+1)/2) is broadcast and checked by everyone.
 * Works for n = 1 (rank 0 sends to itself with MPI_Isend before its MPI_Recv).
 *
 * Output: "FAIL ring: ..." per failed check, "OK ring rank=R size=N" per passing rank,
 * "OK ring all ranks=N laps=L token=T" from rank 0.  Non-zero exit on any failure. */
#include <mpi.h>
#include <stdio.h>

enum { LAPS = 5 };

static int failures = 0;

static void check(int ok, int rank, const char *what, long long got, long long want)
{
    if (!ok) {
        printf("FAIL ring: rank %d: %s: got %lld, want %lld\n", rank, what, got, want);
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

    const int next = (rank + 1) % size;
    const int prev = (rank + size - 1) % size;
    const long long lap_total = (long long)size * (size + 1) / 2; /* sum of rank+1 over all ranks */
    long long token = 0;

    for (int lap = 0; lap < LAPS; ++lap) {
        char what[64];
        if (rank == 0) {
            long long outgoing = token + 1;
            MPI_Request request;
            MPI_Isend(&outgoing, 1, MPI_LONG_LONG, next, lap, MPI_COMM_WORLD, &request);
            MPI_Recv(&token, 1, MPI_LONG_LONG, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            snprintf(what, sizeof what, "token back at rank 0 after lap %d", lap);
            check(token == (lap + 1) * lap_total, rank, what, token, (lap + 1) * lap_total);
        } else {
            MPI_Recv(&token, 1, MPI_LONG_LONG, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            long long want = lap * lap_total + (long long)rank * (rank + 1) / 2;
            snprintf(what, sizeof what, "token received in lap %d", lap);
            check(token == want, rank, what, token, want);
            token += rank + 1;
            MPI_Send(&token, 1, MPI_LONG_LONG, next, lap, MPI_COMM_WORLD);
        }
    }

    long long final_token = rank == 0 ? token : -1;
    MPI_Bcast(&final_token, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    check(final_token == LAPS * lap_total, rank, "final token", final_token, LAPS * lap_total);

    int total_failures = -1;
    MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failures == 0) {
        printf("OK ring rank=%d size=%d\n", rank, size);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (total_failures == 0)
            printf("OK ring all ranks=%d laps=%d token=%lld\n", size, LAPS, final_token);
        else
            printf("FAIL ring: %d failed checks over %d ranks\n", total_failures, size);
        fflush(stdout);
    }
    MPI_Finalize();
    return total_failures == 0 ? 0 : 1;
}
