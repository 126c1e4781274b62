/* A racy master-worker program: rank 0 hands out TASKS tasks and combines
 * the results in the order they arrive, into a checksum that depends on
 * that order. Which worker finishes first changes from run to run, so the
 * output does too: the input of the replay module's tests and of the
 * engine benchmark's wildcard-heavy trace.
 *
 * Three phases of TASKS/3 tasks each, one per way MPI lets the library
 * choose the outcome:
 *   1. MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG);
 *   2. one MPI_Irecv per worker, completed by MPI_Waitany;
 *   3. the same, polled with MPI_Testsome.
 * A worker receives a task (its tag is the task's number, TASKS+1 stops
 * it), computes for a time that depends on the task, and sends its result.
 *
 * usage: masterworker [TASKS [WORK_US]]   (default 300 tasks, 20 us)
 * prints (rank 0): masterworker: tasks N checksum C
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int tasks, work_us;

static double spin(double us)
{
    double t0 = MPI_Wtime(), x = 1;
    while ((MPI_Wtime() - t0) * 1e6 < us)
        x = x * 1.0000001 + 1e-9;
    return x;
}

static void worker(void)
{
    for (;;) {
        int task;
        MPI_Status st;
        MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == tasks + 1)
            return;
        spin(work_us * (1 + task % 3) + (spin(0) > 2));
        long result = (long)task * 7919 + 13;
        MPI_Send(&result, 1, MPI_LONG, 0, task, MPI_COMM_WORLD);
    }
}

/* The master's state: the next task to hand out, and the checksum. */
static int next_task;
static unsigned long checksum = 1469598103934665603ul;

static void combine(long result, int worker)
{
    checksum = (checksum ^ (unsigned long)(result + worker)) * 1099511628211ul;
}

/* Hands `w` its next task, or stops it when none is left. */
static void feed(int w)
{
    int task = next_task < tasks ? next_task++ : tasks + 1;
    MPI_Send(&task, 1, MPI_INT, w, task, MPI_COMM_WORLD);
}

static void master(int size)
{
    int workers = size - 1, done = 0;
    for (int w = 1; w <= workers; w++)
        feed(w);
    /* 1: blocking wildcard receives. */
    while (done < tasks / 3) {
        long result;
        MPI_Status st;
        MPI_Recv(&result, 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        combine(result, st.MPI_SOURCE);
        done++;
        feed(st.MPI_SOURCE);
    }
    /* Every worker has one task out: one receive each from now on. */
    long *results = malloc(sizeof(long) * workers);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * workers);
    int *idx = malloc(sizeof(int) * workers);
    for (int w = 0; w < workers; w++)
        MPI_Irecv(&results[w], 1, MPI_LONG, w + 1, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[w]);
    int outstanding = workers;
    /* 2: MPI_Waitany. */
    while (done < 2 * tasks / 3) {
        int i;
        MPI_Waitany(workers, reqs, &i, MPI_STATUS_IGNORE);
        combine(results[i], i + 1);
        done++;
        if (next_task < tasks)
            MPI_Irecv(&results[i], 1, MPI_LONG, i + 1, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[i]);
        else
            outstanding--;
        feed(i + 1);
    }
    /* 3: MPI_Testsome, polled, until every result is in. */
    while (outstanding > 0) {
        int n;
        MPI_Testsome(workers, reqs, &n, idx, MPI_STATUSES_IGNORE);
        if (n == MPI_UNDEFINED)
            break;
        for (int k = 0; k < n; k++) {
            int i = idx[k];
            combine(results[i], i + 1);
            done++;
            if (next_task < tasks)
                MPI_Irecv(&results[i], 1, MPI_LONG, i + 1, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[i]);
            else
                outstanding--; /* feed stops it */
            feed(i + 1);
        }
    }
    printf("masterworker: tasks %d checksum %lu\n", done, checksum);
    free(results);
    free(reqs);
    free(idx);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tasks = argc > 1 ? atoi(argv[1]) : 300;
    work_us = argc > 2 ? atoi(argv[2]) : 20;
    if (size < 2 || tasks < 3 * (size - 1)) {
        if (rank == 0)
            fprintf(stderr, "masterworker: needs 2 ranks or more, and 3 tasks a worker or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0)
        master(size);
    else
        worker();
    MPI_Finalize();
    return 0;
}
