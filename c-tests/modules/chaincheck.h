/* A per-thread log of the layers an MPI call passes through. */
#ifndef CHAINCHECK_H
#define CHAINCHECK_H
/* Appends one space-separated token to this thread's log. */
void chaincheck_log(const char *module, char direction, const char *routine);
/* Returns this thread's log and clears it; the pointer is valid until the
 * next call on the same thread. */
const char *chaincheck_take(void);
/* Takes this thread's log and, on rank 0, prints it as "WHAT: LOG". */
void chaincheck_show(int rank, const char *what);
#endif
