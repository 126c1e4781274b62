/* The tracer's write-out, alone: appending CHUNK-KiB writes to a new file,
 * as a rank file grows, with and without its disk space reserved ahead
 * (fallocate FALLOC_FL_KEEP_SIZE, 8 MiB at a time, the reservation's own
 * cost counted in the write that triggers it), which is what
 * modules/tracer/src/output.rs does. Why: a rank writes a full buffer out
 * while its peer may be waiting for its next message.
 *
 * usage: writeout FOLDER [CHUNK_KIB [CHUNKS [ROUNDS]]]   (256 400 5)
 * prints: append_us MEAN MEDIAN reserved_us MEAN MEDIAN   (us per write
 *         over ROUNDS rounds of CHUNKS writes each, the two kinds taking
 *         turns; the mean carries the reservations)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One file of `chunks` writes; each write's time into `out`. */
static void one_file(const char *path, int reserve, const char *buf, size_t chunk, int chunks,
                     double *out)
{
    const off_t ahead = 8 << 20;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    off_t end = 0, reserved = 0;
    for (int i = 0; i < chunks; i++) {
        double t = now_us();
        if (reserve && end + (off_t)chunk > reserved) {
            if (fallocate(fd, FALLOC_FL_KEEP_SIZE, reserved, ahead) != 0) {
                perror("fallocate");
                exit(1);
            }
            reserved += ahead;
        }
        if (write(fd, buf, chunk) != (ssize_t)chunk) {
            perror("write");
            exit(1);
        }
        out[i] = now_us() - t;
        end += chunk;
    }
    if (reserve && ftruncate(fd, end) != 0)
        perror("ftruncate");
    close(fd);
    unlink(path);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: writeout FOLDER [CHUNK_KIB [CHUNKS [ROUNDS]]]\n");
        return 2;
    }
    size_t chunk = (argc > 2 ? atoi(argv[2]) : 256) * 1024;
    int chunks = argc > 3 ? atoi(argv[3]) : 400;
    int rounds = argc > 4 ? atoi(argv[4]) : 5;
    char path[4096];
    snprintf(path, sizeof path, "%s/writeout-%d.tmp", argv[1], (int)getpid());
    char *buf = malloc(chunk);
    double *t[2];
    for (int k = 0; k < 2; k++)
        t[k] = malloc(sizeof(double) * chunks * rounds);
    if (!buf || !t[0] || !t[1])
        return 1;
    memset(buf, 7, chunk);
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++)
            one_file(path, (k + r) % 2 == 1 ? 1 : 0, buf, chunk, chunks,
                     t[(k + r) % 2] + (size_t)r * chunks);
    size_t n = (size_t)chunks * rounds;
    double mean[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < n; i++)
            mean[k] += t[k][i] / n;
        qsort(t[k], n, sizeof(double), cmp);
    }
    printf("append_us %.1f %.1f reserved_us %.1f %.1f\n", mean[0], t[0][n / 2], mean[1], t[1][n / 2]);
    return 0;
}
