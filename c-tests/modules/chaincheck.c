#include "chaincheck.h"
#include <stdio.h>
#include <string.h>

static __thread char log_buf[4096];
static __thread size_t log_len;
static __thread char taken[4096];

void chaincheck_log(const char *module, char direction, const char *routine)
{
    int n = snprintf(log_buf + log_len, sizeof log_buf - log_len, "%s%s%c%s",
                     log_len ? " " : "", module, direction, routine);
    if (n > 0 && (size_t)n < sizeof log_buf - log_len)
        log_len += (size_t)n;
}

const char *chaincheck_take(void)
{
    memcpy(taken, log_buf, log_len);
    taken[log_len] = '\0';
    log_len = 0;
    return taken;
}

void chaincheck_show(int rank, const char *what)
{
    const char *log = chaincheck_take();
    if (rank == 0)
        printf("%s: %s\n", what, log);
}
