/* abort.c: after a barrier, rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7); every other rank blocks
 * in an MPI_Recv from rank 1 that never comes.  The launcher must kill the job and exit with
 * status 7; a run that returns from MPI_Abort or from the receive is a failure.
 * Needs two or more ranks (with one rank it prints a FAIL line and exits 2).
 *
 * Output: "abort: rank 1 calling MPI_Abort(MPI_COMM_WORLD, 7)" just before the call, and
 * "abort: rank R waiting" from the other ranks; "FAIL abort: ..." if anything returns. */
#include <mpi.h>
#include <stdio.h>

enum { ABORT_CODE = 7 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        printf("FAIL abort: needs at least 2 ranks, got %d\n", size);
        fflush(stdout);
        MPI_Finalize();
        return 2;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        printf("abort: rank 1 calling MPI_Abort(MPI_COMM_WORLD, %d)\n", ABORT_CODE);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, ABORT_CODE);
        printf("FAIL abort: rank 1 returned from MPI_Abort\n");
        fflush(stdout);
        return 3;
    }
    printf("abort: rank %d waiting\n", rank);
    fflush(stdout);
    int never = -1;
    MPI_Recv(&never, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("FAIL abort: rank %d returned from MPI_Recv (value %d)\n", rank, never);
    fflush(stdout);
    MPI_Finalize();
    return 4;
}
