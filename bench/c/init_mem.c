/* How long MPI_Init takes (the paper's figure 5: libpnmpi loads the
 * modules inside it) and how much memory the process holds right after it
 * (section 5.6).
 *
 * usage: init_mem [PHASE]
 * prints: init_ns X              wall time of the MPI_Init call
 *         heap_bytes H           malloc'd bytes in use after MPI_Init
 *         rss_kib R              VmRSS after MPI_Init
 *         hwm_kib W              VmHWM (peak resident) after MPI_Init
 *         table_heap_bytes T     with PHASE: what MPI_Pcontrol(PHASE) added
 *         rss_after_table_kib S  with PHASE: VmRSS after it
 *
 * With PHASE, the modules are configured with `phases PHASE`: inactive at
 * start, so the link-stack table built in MPI_Init is empty, and
 * MPI_Pcontrol(PHASE) makes libpnmpi build the table with all of them.
 * Nothing else allocates then, so T is the table alone: the term of the
 * memory model that grows with modules x routines.
 */
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Bytes handed out by malloc: in the arenas plus in mmap'd blocks. */
static size_t heap_bytes(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* The value in kB of the /proc/self/status line starting with `key`. */
static long status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long value = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, n) == 0) {
            value = atol(line + n);
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return value;
}

int main(int argc, char **argv)
{
    int phase = argc > 1 ? atoi(argv[1]) : 0;
    double start = now_ns();
    MPI_Init(&argc, &argv);
    double init_ns = now_ns() - start;
    /* Everything is read before anything is printed: the first printf
     * allocates stdout's buffer, which would count as the table's. */
    size_t heap = heap_bytes();
    long rss = status_kib("VmRSS:");
    long hwm = status_kib("VmHWM:");
    size_t table = 0;
    long rss_after_table = 0;
    if (phase != 0) {
        MPI_Pcontrol(phase);
        table = heap_bytes() - heap;
        rss_after_table = status_kib("VmRSS:");
    }
    printf("init_ns %.0f\n", init_ns);
    printf("heap_bytes %zu\n", heap);
    printf("rss_kib %ld\n", rss);
    printf("hwm_kib %ld\n", hwm);
    if (phase != 0) {
        printf("table_heap_bytes %zu\n", table);
        printf("rss_after_table_kib %ld\n", rss_after_table);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
