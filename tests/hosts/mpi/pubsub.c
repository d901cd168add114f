/* pubsub.c: name publishing and (with two or more ranks) a connect/accept over the port.
 *
 *  1. rank 0 opens a port and publishes it as SERVICE (once: whether a second publish of the
 *     same name fails is the host's choice; ORTE's data server accepts it);
 *  2. the port string is broadcast over MPI; after a barrier every rank looks SERVICE up and
 *     compares the result with the broadcast string (with one rank, rank 0 looks up its own name);
 *     a lookup of a name nobody published must fail with MPI_ERR_NAME;
 *  3. with two or more ranks, rank 0 accepts and rank 1 connects over the port (each on
 *     MPI_COMM_SELF), they exchange a value in each direction and disconnect;
 *  4. rank 0 unpublishes SERVICE; after a barrier every lookup of it must fail with MPI_ERR_NAME;
 *     rank 0 closes the port.
 * Errors are returned (MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF) and checked.
 *
 * Output: "FAIL pubsub: ..." per failed check, "OK pubsub rank=R size=N" per passing rank,
 * "OK pubsub all ranks=N connect=yes|no" from rank 0.  Non-zero exit on any failure. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define SERVICE "pmixcxx-test-service"
#define NEVER_PUBLISHED "pmixcxx-test-never-published"

static int failures = 0;
static int rank = -1;

static void fail(const char *what, const char *detail)
{
    printf("FAIL pubsub: rank %d: %s: %s\n", rank, what, detail);
    fflush(stdout);
    ++failures;
}

static const char *error_text(int rc, char *buffer)
{
    int length = 0, error_class = -1;
    MPI_Error_class(rc, &error_class);
    MPI_Error_string(rc, buffer, &length);
    snprintf(buffer + length, (size_t)(MPI_MAX_ERROR_STRING + 64 - length), " (rc %d, class %d)", rc,
             error_class);
    return buffer;
}

static void expect_success(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING + 64];
        fail(what, error_text(rc, text));
    }
}

/* a lookup that must fail with error class MPI_ERR_NAME */
static void expect_lookup_fails(const char *service, const char *what)
{
    char port[MPI_MAX_PORT_NAME + 1];
    memset(port, 0, sizeof port);
    int rc = MPI_Lookup_name(service, MPI_INFO_NULL, port);
    int error_class = -1;
    MPI_Error_class(rc, &error_class);
    if (rc == MPI_SUCCESS) {
        fail(what, "lookup succeeded; found:");
        printf("FAIL pubsub: rank %d:   '%s'\n", rank, port);
    } else if (error_class != MPI_ERR_NAME) {
        char text[MPI_MAX_ERROR_STRING + 64];
        fail(what, error_text(rc, text));
    }
}

static void connect_accept(const char *port, int size)
{
    if (size < 2 || rank > 1)
        return;
    MPI_Comm inter = MPI_COMM_NULL;
    int rc = rank == 0 ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter)
                       : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    expect_success(rc, rank == 0 ? "MPI_Comm_accept" : "MPI_Comm_connect");
    if (rc != MPI_SUCCESS)
        return;
    int remote = -1;
    MPI_Comm_remote_size(inter, &remote);
    if (remote != 1)
        fail("connect/accept intercomm remote size", "not 1");
    /* rank 0 sends 1000, rank 1 answers 1000 + 1 */
    int value = -1;
    if (rank == 0) {
        value = 1000;
        expect_success(MPI_Send(&value, 1, MPI_INT, 0, 11, inter), "send over accepted intercomm");
        expect_success(MPI_Recv(&value, 1, MPI_INT, 0, 12, inter, MPI_STATUS_IGNORE),
                       "recv over accepted intercomm");
        if (value != 1001)
            fail("reply over accepted intercomm", "not 1001");
    } else {
        expect_success(MPI_Recv(&value, 1, MPI_INT, 0, 11, inter, MPI_STATUS_IGNORE),
                       "recv over connected intercomm");
        if (value != 1000)
            fail("value over connected intercomm", "not 1000");
        value += 1;
        expect_success(MPI_Send(&value, 1, MPI_INT, 0, 12, inter), "send over connected intercomm");
    }
    expect_success(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    char port[MPI_MAX_PORT_NAME + 1];
    memset(port, 0, sizeof port);
    if (rank == 0) {
        expect_success(MPI_Open_port(MPI_INFO_NULL, port), "MPI_Open_port");
        if (port[0] == '\0')
            fail("MPI_Open_port", "empty port name");
        expect_success(MPI_Publish_name(SERVICE, MPI_INFO_NULL, port), "MPI_Publish_name");
    }
    MPI_Bcast(port, MPI_MAX_PORT_NAME + 1, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);

    char found[MPI_MAX_PORT_NAME + 1];
    memset(found, 0, sizeof found);
    int rc = MPI_Lookup_name(SERVICE, MPI_INFO_NULL, found);
    expect_success(rc, "MPI_Lookup_name of the published service");
    if (rc == MPI_SUCCESS && strcmp(found, port) != 0) {
        fail("looked-up port differs from the published one", found);
        printf("FAIL pubsub: rank %d:   published '%s'\n", rank, port);
    }
    expect_lookup_fails(NEVER_PUBLISHED, "MPI_Lookup_name of a never-published service");

    connect_accept(port, size);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        expect_success(MPI_Unpublish_name(SERVICE, MPI_INFO_NULL, port), "MPI_Unpublish_name");
    MPI_Barrier(MPI_COMM_WORLD);
    expect_lookup_fails(SERVICE, "MPI_Lookup_name after MPI_Unpublish_name");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        expect_success(MPI_Close_port(port), "MPI_Close_port");

    int total_failures = -1;
    MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failures == 0) {
        printf("OK pubsub rank=%d size=%d\n", rank, size);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (total_failures == 0)
            printf("OK pubsub all ranks=%d connect=%s\n", size, size >= 2 ? "yes" : "no");
        else
            printf("FAIL pubsub: %d failed checks over %d ranks\n", total_failures, size);
        fflush(stdout);
    }
    MPI_Finalize();
    (void)argc;
    (void)argv;
    return total_failures == 0 ? 0 : 1;
}
